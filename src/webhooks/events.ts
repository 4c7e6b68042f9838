import { createHash } from 'node:crypto';
import { statusEnvelope } from '../tasks/views';
import type { TaskRecord } from '../tasks/types';
import type { Deliveries } from './types';

/** Stable per (kind, task): a retried job re-enqueues the same event, which the job id then deduplicates. */
export function eventIdFor(kind: 'callback' | 'webhook', taskId: string): string {
  return `evt_${createHash('sha256').update(`${kind}:${taskId}`).digest('hex').slice(0, 32)}`;
}

/** On a terminal task: its callback (request_type callback) and its batch item webhook (batch with webhook_url). */
export function notifyOnTerminal(deliveries: Deliveries) {
  return async (task: TaskRecord): Promise<void> => {
    if (task.requestType === 'callback' && task.callbackUrl) {
      await deliveries.enqueue({
        kind: 'callback',
        accountId: task.accountId,
        url: task.callbackUrl,
        body: JSON.stringify(statusEnvelope(task)),
        eventId: eventIdFor('callback', task.taskId),
        taskId: task.taskId,
      });
    }
    if (task.batch?.webhookUrl) {
      const envelope = statusEnvelope(task);
      await deliveries.enqueue({
        kind: 'webhook',
        accountId: task.accountId,
        url: task.batch.webhookUrl,
        body: JSON.stringify({
          ...envelope,
          batch: { batchId: task.batch.batchId, clientItemId: task.batch.clientItemId },
        }),
        eventId: eventIdFor('webhook', task.taskId),
        taskId: task.taskId,
        batchId: task.batch.batchId,
        secretVersion: task.batch.secretVersion,
      });
    }
  };
}
