import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from '../../src/store/redis';

/** The Redis found by global setup, or undefined (then Redis tests skip, as global setup announced). */
export const redisUrl: string | undefined = process.env.GENWAY_TEST_REDIS_URL;

/**
 * The store modes a suite runs in, for `describe.each`: `[name, redis]`, embedded always, Redis when one answers.
 */
export const storeModes: [string, boolean][] = [
  ['embedded', false],
  ...(redisUrl ? [['redis', true] as [string, boolean]] : []),
];

/** `describe` for Redis-backed suites: runs when a Redis answers, announced skip otherwise. */
export const describeRedis: jest.Describe = redisUrl ? describe : describe.skip;

/** The nodes of the Redis Cluster global setup started (3 masters, 3 replicas), or undefined. */
export const redisClusterNodes: string[] | undefined = process.env.GENWAY_TEST_REDIS_CLUSTER?.split(',');

/** `describe` for suites that need that cluster. */
export const describeCluster: jest.Describe = redisClusterNodes ? describe : describe.skip;

/** Genway's store target for the test cluster (the URL gives no host in cluster mode). */
export function clusterTarget(nodes = redisClusterNodes!): RedisTarget {
  return { url: 'redis://cluster.invalid:6379', clusterNodes: nodes };
}

/** Deletes every key of `prefix` on every master of the cluster, BullMQ's `{prefix:bull}` keys included. */
export async function dropClusterPrefix(prefix: string, nodes = redisClusterNodes): Promise<void> {
  if (!nodes) return;
  const cluster = new Cluster(
    nodes.map((n) => {
      const at = n.lastIndexOf(':');
      return { host: n.slice(0, at), port: Number(n.slice(at + 1)) };
    }),
  );
  try {
    await Promise.all(
      cluster.nodes('master').map(async (node) => {
        for (const match of [`${prefix}:*`, `{${prefix}:bull}*`]) {
          let cursor = '0';
          do {
            const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
            cursor = next;
            for (const key of keys) await node.del(key);
          } while (cursor !== '0');
        }
      }),
    );
  } finally {
    cluster.disconnect();
  }
}

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
