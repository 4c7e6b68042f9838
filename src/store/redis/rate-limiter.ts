import type { Redis } from 'ioredis';
import type { RateLimit } from '../../config';
import type { RedisKeys } from '../keys';
import type { RateLimitDecision, RateLimiter } from '../types';
import { LuaScript } from './scripts';

const tokenBucket = new LuaScript('token_bucket');

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async take(bucketId: string, limit: RateLimit, cost = 1): Promise<RateLimitDecision> {
    const [allowed, retryAfterMs, remaining] = (await tokenBucket.run(
      this.redis,
      [this.keys.rateLimit(bucketId)],
      [limit.ratePerSec, limit.burst, cost],
    )) as [number, number, number];
    return { allowed: allowed === 1, retryAfterMs, remaining };
  }
}
