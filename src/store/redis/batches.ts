import { createHash } from 'node:crypto';
import type { RedisClient } from './connection';
import type { RedisKeys } from '../keys';
import { LuaScript } from './scripts';
import type { BatchClaim, BatchRecord, ItemKeyClaim } from '../../batches/types';
import type { BatchStore } from '../../batches/store';

import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import { indexedRecords, indexTrimBelow } from './account-index';

const compareAndDelete = new LuaScript('compare_and_delete');
const IN_FLIGHT = 'in-flight';

/** Client-chosen idempotency keys are hashed into key names: bounded length, any characters. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export class RedisBatchStore implements BatchStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async claim(accountId: string, idempotencyKey: string, claimTtlMs: number): Promise<BatchClaim> {
    const key = this.keys.batchIdempotencyKey(accountId, digest(idempotencyKey));
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.redis.set(key, IN_FLIGHT, 'PX', claimTtlMs, 'NX')) === 'OK')
        return { status: 'claimed' };
      const current = await this.redis.get(key);
      if (current === IN_FLIGHT) return { status: 'in_flight' };
      if (current === null) continue; // lapsed between the two reads
      const batch = await this.redis.get(this.keys.batch(current));
      if (batch) return { status: 'exists', batch: JSON.parse(batch) as BatchRecord };
      await compareAndDelete.run(this.redis, [key], [current]); // key outlived its batch
    }
    return { status: 'in_flight' };
  }

  async save(batch: BatchRecord, now: number): Promise<void> {
    // One slot in a cluster: the batch's id carries its account's tag. Entries older than one batch lifetime (every
    // batch has the same) are of expired batches, trimmed here; others go as a list meets them.
    const index = this.keys.batchIndex(batch.accountId);
    await this.redis
      .multi()
      .zadd(index, 0, indexMember(batch.createdAt, batch.batchId))
      .zremrangebylex(index, '-', `(${indexTrimBelow(now, batch.expiresAt - batch.createdAt)}`)
      .set(this.keys.batch(batch.batchId), JSON.stringify(batch), 'PXAT', batch.expiresAt)
      .set(
        this.keys.batchIdempotencyKey(batch.accountId, digest(batch.idempotencyKey)),
        batch.batchId,
        'PXAT',
        batch.expiresAt,
      )
      .exec();
  }

  async release(accountId: string, idempotencyKey: string): Promise<void> {
    await compareAndDelete.run(
      this.redis,
      [this.keys.batchIdempotencyKey(accountId, digest(idempotencyKey))],
      [IN_FLIGHT],
    );
  }

  async get(batchId: string): Promise<BatchRecord | null> {
    const batch = await this.redis.get(this.keys.batch(batchId));
    return batch ? (JSON.parse(batch) as BatchRecord) : null;
  }

  async claimItemKey(
    accountId: string,
    key: string,
    taskId: string,
    expiresAt: number,
  ): Promise<ItemKeyClaim> {
    const name = this.keys.itemIdempotencyKey(accountId, digest(key));
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.redis.set(name, taskId, 'PXAT', expiresAt, 'NX')) === 'OK')
        return { status: 'claimed' };
      const existing = await this.redis.get(name);
      if (existing !== null) return { status: 'exists', taskId: existing };
    }
    throw new Error('item idempotency key kept changing while being claimed');
  }

  async releaseItemKey(accountId: string, key: string, taskId: string): Promise<void> {
    await compareAndDelete.run(this.redis, [this.keys.itemIdempotencyKey(accountId, digest(key))], [taskId]);
  }

  async findItemKey(accountId: string, key: string): Promise<string | null> {
    return this.redis.get(this.keys.itemIdempotencyKey(accountId, digest(key)));
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (batch: BatchRecord) => boolean,
  ): Promise<Page<BatchRecord>> {
    return collectPage(
      page,
      indexedRecords<BatchRecord>(this.redis, this.keys.batchIndex(accountId), this.keys.batch),
      match,
    );
  }
}
