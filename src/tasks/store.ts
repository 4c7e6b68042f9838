import type { BudgetEvent, BudgetRefusal } from '../accounts/usage';
import type { Page, PageRequest } from '../listing';
import type { TaskRecord, TaskState } from './types';

export type CreateResult =
  /** With the budget thresholds the charge crossed, for the account's webhook. */
  | { status: 'created'; budgetEvents?: BudgetEvent[] }
  | { status: 'insufficient_balance' }
  | { status: 'unknown_account' }
  /** The charge would take the key's or the account's spend over a hard budget: nothing was written. */
  | { status: 'over_budget'; budget: BudgetRefusal };

export interface TaskStore {
  /**
   * Charges `task.prepared.chargeMicros` (ledger reference `task:<taskId>`) and writes the task, in one atomic
   * step: when the charge does not fit the balance or a budget, nothing is written. The charge counts on the
   * usage rollups of the task's key and model.
   */
  createWithCharge(task: TaskRecord): Promise<CreateResult>;
  get(taskId: string): Promise<TaskRecord | null>;
  /**
   * Writes `next` only if the stored task is still in one of `from` (compare-and-set); false otherwise. A task
   * written in a final state (success, failed) is deleted `retentionMs` after its completion.
   */
  replace(next: TaskRecord, from: readonly TaskState[]): Promise<boolean>;
  /**
   * The account's tasks newest first (by createTime, then id) below `page.cursor`, that `match`: each task is
   * indexed when it is created and leaves the index with its retention.
   */
  list(accountId: string, page: PageRequest, match: (task: TaskRecord) => boolean): Promise<Page<TaskRecord>>;
}
