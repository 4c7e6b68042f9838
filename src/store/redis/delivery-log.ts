import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import type { DeliveryAttempt, DeliveryLogStore } from '../../webhooks/store';
import type { RedisKeys } from '../keys';
import { indexedRecords, indexTrimBelow } from './account-index';
import type { RedisClient } from './connection';

/**
 * One string per attempt, expiring with the log's retention, and a sorted set per account (one slot in a cluster:
 * the delivery id carries the account's tag). Index entries past the retention are trimmed as attempts are recorded.
 */
export class RedisDeliveryLog implements DeliveryLogStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async record(attempt: DeliveryAttempt, retentionMs: number): Promise<void> {
    const index = this.keys.deliveryIndex(attempt.accountId);
    await this.redis
      .multi()
      .set(this.keys.delivery(attempt.deliveryId), JSON.stringify(attempt), 'PX', retentionMs)
      .zadd(index, 0, indexMember(attempt.at, attempt.deliveryId))
      .zremrangebylex(index, '-', `(${indexTrimBelow(attempt.at, retentionMs)}`)
      .exec();
  }

  async get(deliveryId: string): Promise<DeliveryAttempt | null> {
    const json = await this.redis.get(this.keys.delivery(deliveryId));
    return json ? (JSON.parse(json) as DeliveryAttempt) : null;
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (attempt: DeliveryAttempt) => boolean,
  ): Promise<Page<DeliveryAttempt>> {
    return collectPage(
      page,
      indexedRecords<DeliveryAttempt>(this.redis, this.keys.deliveryIndex(accountId), this.keys.delivery),
      match,
    );
  }
}
