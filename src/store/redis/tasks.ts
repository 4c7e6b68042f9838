import type { RedisClient } from './connection';
import type { RedisKeys } from '../keys';
import { ledgerCutoff, postingUsageArgs, postingUsageKeys } from './accounts';
import type { BudgetEvent, BudgetRefusal } from '../../accounts/usage';
import { LuaScript } from './scripts';
import type { CreateResult, TaskStore } from '../../tasks/store';
import type { TaskRecord, TaskState } from '../../tasks/types';
import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import { indexedRecords, indexTrimBelow } from './account-index';

const taskCreate = new LuaScript('task_create');
const taskReplace = new LuaScript('task_replace');

/**
 * How long past the retention a task's index entry is kept at most: longer than any task stays unfinished (a relay
 * task polls for at most a day or so). Entries of expired tasks also go as a list meets them.
 */
const INDEX_MARGIN_MS = 7 * 24 * 3600_000;

export class RedisTaskStore implements TaskStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly retentionMs: number,
    private readonly ledgerRetentionMs = Infinity,
    private readonly usageDayRetentionMs = 0,
  ) {}

  async createWithCharge(task: TaskRecord): Promise<CreateResult> {
    const k = this.keys;
    const [status, payload] = (await taskCreate.run(
      this.redis,
      [
        k.account(task.accountId),
        k.ledger(task.accountId),
        k.ledgerRefs(task.accountId),
        k.task(task.taskId),
        k.taskIndex(task.accountId),
        ...postingUsageKeys(k, task.accountId, task.createTime),
      ],
      [
        task.accountId,
        task.prepared.chargeMicros,
        `task:${task.taskId}`,
        task.createTime,
        JSON.stringify(task),
        ledgerCutoff(task.createTime, this.ledgerRetentionMs),
        indexMember(task.createTime, task.taskId),
        indexTrimBelow(task.createTime, this.retentionMs + INDEX_MARGIN_MS),
        task.keyId,
        task.model,
        ...postingUsageArgs(task.createTime, this.usageDayRetentionMs),
      ],
    )) as [string, string | undefined];
    switch (status) {
      case 'created':
        return payload
          ? { status, budgetEvents: JSON.parse(payload) as BudgetEvent[] }
          : { status: 'created' };
      case 'over_budget':
        return { status, budget: JSON.parse(payload!) as BudgetRefusal };
      case 'insufficient_balance':
      case 'unknown_account':
        return { status };
      default:
        throw new Error(`task_create answered ${status}`);
    }
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    const json = await this.redis.get(this.keys.task(taskId));
    return json ? (JSON.parse(json) as TaskRecord) : null;
  }

  async replace(next: TaskRecord, from: readonly TaskState[]): Promise<boolean> {
    const done = await taskReplace.run(
      this.redis,
      [this.keys.task(next.taskId)],
      [from.join(','), JSON.stringify(next), this.retentionMs],
    );
    return done === 1;
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (task: TaskRecord) => boolean,
  ): Promise<Page<TaskRecord>> {
    return collectPage(
      page,
      indexedRecords<TaskRecord>(this.redis, this.keys.taskIndex(accountId), this.keys.task),
      match,
    );
  }
}
