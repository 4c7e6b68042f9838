import type { AccountStore } from '../../accounts/store';
import type { CreateResult, TaskStore } from '../../tasks/store';
import type { TaskRecord, TaskState } from '../../tasks/types';

import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import { MemoryAccountIndex } from './account-index';

const isFinal = (state: TaskState) => state === 'success' || state === 'failed';

/**
 * Embedded mode. Charge-then-write runs without an await in between the check and the write, so it is atomic.
 * Records are kept as JSON text (as in Redis): callers always get their own copy, and JSON is cheaper than
 * structuredClone for these plain records.
 */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, { state: TaskState; json: string }>();
  /** Finished tasks in completion order, deleted once their retention is over (swept as tasks are written). */
  private readonly expiries: { taskId: string; accountId: string; member: string; at: number }[] = [];
  private readonly index = new MemoryAccountIndex();

  constructor(
    private readonly accounts: AccountStore,
    private readonly retentionMs: number,
  ) {}

  async createWithCharge(task: TaskRecord): Promise<CreateResult> {
    const result = await this.accounts.post({
      accountId: task.accountId,
      kind: 'charge',
      amountMicros: task.prepared.chargeMicros,
      reference: `task:${task.taskId}`,
      at: task.createTime,
      usage: { keyId: task.keyId, model: task.model, source: 'tasks' },
      enforceBudgets: true,
    });
    if (result.status === 'insufficient_balance' || result.status === 'unknown_account')
      return { status: result.status };
    if (result.status === 'over_budget') return result;
    this.tasks.set(task.taskId, { state: task.state, json: JSON.stringify(task) });
    this.index.add(task.accountId, indexMember(task.createTime, task.taskId));
    this.sweep(task.createTime);
    return result.status === 'applied' && result.budgetEvents
      ? { status: 'created', budgetEvents: result.budgetEvents }
      : { status: 'created' };
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const task = this.tasks.get(taskId);
    return task ? (JSON.parse(task.json) as TaskRecord) : null;
  }

  async replace(next: TaskRecord, from: readonly TaskState[]): Promise<boolean> {
    const current = this.tasks.get(next.taskId);
    if (!current || !from.includes(current.state)) return false;
    this.tasks.set(next.taskId, { state: next.state, json: JSON.stringify(next) });
    if (isFinal(next.state)) {
      const completed = next.completeTime ?? next.createTime;
      this.expiries.push({
        taskId: next.taskId,
        accountId: next.accountId,
        member: indexMember(next.createTime, next.taskId),
        at: completed + this.retentionMs,
      });
      this.sweep(completed);
    }
    return true;
  }

  /** Drops tasks whose retention ended by `now` (a task's own timestamp: the store keeps no clock). */
  private sweep(now: number): void {
    let n = 0;
    for (; n < this.expiries.length && this.expiries[n].at <= now; n++) {
      const { taskId, accountId, member } = this.expiries[n];
      this.tasks.delete(taskId);
      this.index.remove(accountId, member);
    }
    if (n > 0) this.expiries.splice(0, n);
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (task: TaskRecord) => boolean,
  ): Promise<Page<TaskRecord>> {
    return collectPage(
      page,
      this.index.records(accountId, (id) => {
        const json = this.tasks.get(id)?.json;
        return json ? (JSON.parse(json) as TaskRecord) : null;
      }),
      match,
    );
  }
}
