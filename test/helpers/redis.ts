import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis found by global setup, or undefined (then Redis tests skip, as global setup announced). */
export const redisUrl: string | undefined = process.env.GENWAY_TEST_REDIS_URL;

/** `describe` for Redis-backed suites: runs when a Redis answers, announced skip otherwise. */
export const describeRedis: jest.Describe = redisUrl ? describe : describe.skip;

/** A fresh key namespace per test, so suites never see each other's data. */
export function uniquePrefix(label = 't'): string {
  return `genway-test:${label}:${randomBytes(6).toString('hex')}`;
}

/** Deletes every key under `prefix` (SCAN, not KEYS). */
export async function dropPrefix(prefix: string): Promise<void> {
  if (!redisUrl) return;
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
