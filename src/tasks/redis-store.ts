import type { RedisClient } from '../store/redis/connection';
import type { RedisKeys } from '../store/keys';
import { ledgerCutoff } from '../store/redis/accounts';
import { LuaScript } from '../store/redis/scripts';
import type { CreateResult, TaskRecord, TaskState, TaskStore } from './types';

const taskCreate = new LuaScript('task_create');
const taskReplace = new LuaScript('task_replace');

export class RedisTaskStore implements TaskStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly retentionMs: number,
    private readonly ledgerRetentionMs = Infinity,
  ) {}

  async createWithCharge(task: TaskRecord): Promise<CreateResult> {
    const k = this.keys;
    return (await taskCreate.run(
      this.redis,
      [
        k.account(task.accountId),
        k.ledger(task.accountId),
        k.ledgerRefs(task.accountId),
        k.task(task.taskId),
      ],
      [
        task.accountId,
        task.prepared.chargeMicros,
        `task:${task.taskId}`,
        task.createTime,
        JSON.stringify(task),
        ledgerCutoff(task.createTime, this.ledgerRetentionMs),
      ],
    )) as CreateResult;
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
}
