import type { IndexRange } from '../../listing';
import type { RedisClient } from './connection';

/** Up to `n` members of the sorted set `key` (all scores 0, ordered by lex) in `range`, newest first. */
export function indexChunk(redis: RedisClient, key: string, range: IndexRange, n: number): Promise<string[]> {
  const max = range.below === undefined ? '+' : `(${range.below}`;
  const min = range.from === undefined ? '-' : `[${range.from}`;
  return redis.zrange(key, max, min, 'BYLEX', 'REV', 'LIMIT', 0, n);
}

/** Index members older than this are trimmed as new ones are added: their records have expired long since. */
export function indexTrimBelow(now: number, horizonMs: number): string {
  return String(Math.max(0, now - horizonMs)).padStart(15, '0');
}

/**
 * The page reader (src/listing.ts collectPage) of records kept as one JSON string per id and indexed in `index`:
 * one MGET per chunk (an account's records share its hash tag, so one slot in a cluster); entries whose record has
 * expired are dropped from the index as a list meets them.
 */
export function indexedRecords<T>(redis: RedisClient, index: string, keyOf: (id: string) => string) {
  return async (range: IndexRange, n: number): Promise<{ member: string; record: T | null }[]> => {
    const members = await indexChunk(redis, index, range, n);
    if (!members.length) return [];
    const records = await redis.mget(members.map((m) => keyOf(m.slice(m.indexOf(':') + 1))));
    const gone = members.filter((_, i) => records[i] === null);
    if (gone.length) await redis.zrem(index, ...gone);
    return members.map((member, i) => ({
      member,
      record: records[i] === null ? null : (JSON.parse(records[i]!) as T),
    }));
  };
}
