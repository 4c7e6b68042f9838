import type { AccountStore } from '../store/types';
import type { CreateResult, TaskRecord, TaskState, TaskStore } from './types';

/**
 * Embedded mode. Charge-then-write runs without an await in between the check and the write, so it is atomic.
 * Records are kept as JSON text (as in Redis): callers always get their own copy, and JSON is cheaper than
 * structuredClone for these plain records.
 */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, { state: TaskState; json: string }>();

  constructor(private readonly accounts: AccountStore) {}

  async createWithCharge(task: TaskRecord): Promise<CreateResult> {
    const result = await this.accounts.post({
      accountId: task.accountId,
      kind: 'charge',
      amountMicros: task.prepared.chargeMicros,
      reference: `task:${task.taskId}`,
      at: task.createTime,
    });
    if (result.status === 'insufficient_balance' || result.status === 'unknown_account') return result.status;
    this.tasks.set(task.taskId, { state: task.state, json: JSON.stringify(task) });
    return 'created';
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const task = this.tasks.get(taskId);
    return task ? (JSON.parse(task.json) as TaskRecord) : null;
  }

  async replace(next: TaskRecord, from: readonly TaskState[]): Promise<boolean> {
    const current = this.tasks.get(next.taskId);
    if (!current || !from.includes(current.state)) return false;
    this.tasks.set(next.taskId, { state: next.state, json: JSON.stringify(next) });
    return true;
  }
}
