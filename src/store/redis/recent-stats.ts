import {
  SURFACES,
  WINDOW_MINUTES,
  type MinuteCounts,
  type RecentStatsStore,
  type Surface,
} from '../../observability/recent-stats';
import type { RedisKeys } from '../keys';
import type { RedisClient } from './connection';

/** A row lives two windows: long enough for any reader, short enough that nothing piles up. */
const ROW_TTL_MS = 2 * WINDOW_MINUTES * 60_000;

/**
 * Clustered mode: one hash per minute, `<surface>:<field>` -> count, that every replica adds its folds to with
 * HINCRBY (on one hash slot, so a report reads the hour in one pipeline).
 */
export class RedisRecentStats implements RecentStatsStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async add(minute: number, counts: Partial<Record<Surface, MinuteCounts>>): Promise<void> {
    const key = this.keys.recentStats(minute);
    const tx = this.redis.multi();
    for (const [surface, c] of Object.entries(counts) as [Surface, MinuteCounts][]) {
      if (c.requests) tx.hincrby(key, `${surface}:r`, c.requests);
      if (c.serverErrors) tx.hincrby(key, `${surface}:s`, c.serverErrors);
      if (c.clientErrors) tx.hincrby(key, `${surface}:c`, c.clientErrors);
      c.buckets.forEach((n, i) => n && tx.hincrby(key, `${surface}:b${i}`, n));
    }
    tx.pexpire(key, ROW_TTL_MS);
    await tx.exec();
  }

  async read(minutes: number[], slots: number): Promise<Partial<Record<Surface, MinuteCounts>>[]> {
    const pipeline = this.redis.pipeline();
    for (const minute of minutes) pipeline.hgetall(this.keys.recentStats(minute));
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, hash]) => {
      if (err) throw err;
      const fields = hash as Record<string, string>;
      const row: Partial<Record<Surface, MinuteCounts>> = {};
      for (const surface of SURFACES) {
        const requests = Number(fields[`${surface}:r`] ?? 0);
        if (!requests) continue;
        const buckets = Array.from({ length: slots }, (_, i) => Number(fields[`${surface}:b${i}`] ?? 0));
        row[surface] = {
          requests,
          serverErrors: Number(fields[`${surface}:s`] ?? 0),
          clientErrors: Number(fields[`${surface}:c`] ?? 0),
          buckets,
        };
      }
      return row;
    });
  }
}
