import { microsToUsd } from '../money';
import type { TaskRecord } from './types';

/**
 * What the API shows of a task, in one place: the spec's status record (status, callbacks, webhooks), the outcome a
 * batch item carries, and the list and detail views that add what the record leaves out.
 */

/** The outcome of a terminal task: `resultJson` on success, `failCode` and `failMsg` on failure. */
function outcomeOf(task: TaskRecord): Record<string, unknown> {
  if (task.state === 'success') return { resultJson: JSON.stringify({ resultUrls: task.resultUrls ?? [] }) };
  if (task.state === 'failed') return { failCode: task.failCode, failMsg: task.failMsg };
  return {};
}

/** The status record of the spec: exactly the fields the task's state carries. */
export function statusRecord(task: TaskRecord): Record<string, unknown> {
  const record: Record<string, unknown> = { taskId: task.taskId, state: task.state, ...outcomeOf(task) };
  record.createTime = task.createTime;
  if (task.completeTime !== undefined) {
    record.completeTime = task.completeTime;
    record.costTime = task.costTime;
  }
  if (task.state === 'success' && task.billing) record.billing = task.billing;
  return record;
}

/** The envelope of a terminal task as callbacks and webhooks carry it (same shape as the status response). */
export function statusEnvelope(task: TaskRecord) {
  return { code: 200, message: 'success', data: statusRecord(task) };
}

/** A batch item's `result`: the terminal task's id, state and outcome. */
export function itemResult(task: TaskRecord): Record<string, unknown> {
  return { taskId: task.taskId, state: task.state, ...outcomeOf(task) };
}

/** A task in `GET /api/v1/tasks` and its detail: the status record plus model, charge, how it was asked for. */
export function taskView(task: TaskRecord): Record<string, unknown> {
  return {
    ...statusRecord(task),
    model: task.model,
    chargeUsd: microsToUsd(task.prepared.chargeMicros),
    requestType: task.requestType,
    ...(task.batch ? { batchId: task.batch.batchId, clientItemId: task.batch.clientItemId } : {}),
  };
}
