import type { Page, PageRequest } from '../listing';
import type { TaskRecord, TaskState } from './types';

export type CreateResult = 'created' | 'insufficient_balance' | 'unknown_account';

export interface TaskStore {
  /**
   * Charges `task.prepared.chargeMicros` (ledger reference `task:<taskId>`) and writes the task, in one atomic
   * step: when the charge does not fit, nothing is written.
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
