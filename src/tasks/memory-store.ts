import type { AccountStore } from '../store/types';
import type { CreateResult, TaskRecord, TaskState, TaskStore } from './types';

/** Embedded mode. Charge-then-write runs without an await in between the check and the write, so it is atomic. */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, TaskRecord>();

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
    this.tasks.set(task.taskId, structuredClone(task));
    return 'created';
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const task = this.tasks.get(taskId);
    return task ? structuredClone(task) : null;
  }

  async replace(next: TaskRecord, from: readonly TaskState[]): Promise<boolean> {
    const current = this.tasks.get(next.taskId);
    if (!current || !from.includes(current.state)) return false;
    this.tasks.set(next.taskId, structuredClone(next));
    return true;
  }
}
