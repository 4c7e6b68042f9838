import { createMemoryStore } from '../../src/store/memory';
import { createRedisStore } from '../../src/store/redis';
import type { Store, StoreOptions } from '../../src/store';
import {
  clusterTarget,
  dropClusterPrefix,
  dropPrefix,
  redisClusterNodes,
  redisUrl,
  uniquePrefix,
} from '../helpers/redis';

/** A retention no contract test waits out, except the one that sets its own. */
export const OPTIONS = { taskRetentionMs: 30 * 24 * 3600 * 1000, ledgerRetentionMs: 400 * 24 * 3600 * 1000 };

export interface StoreAdapter {
  name: string;
  /** A fresh, empty store; `prefix` lets two instances share one Redis namespace. */
  create(prefix?: string, options?: StoreOptions): Store;
  cleanup(): Promise<void>;
}

/**
 * Every Store adapter the contract suites run against: memory always, Redis when one answers, Redis Cluster (keys
 * laid out by hash slot) when global setup started one.
 */
export function storeAdapters(): StoreAdapter[] {
  const adapters: StoreAdapter[] = [
    {
      name: 'memory',
      create: (_prefix, options = OPTIONS) => createMemoryStore(options),
      cleanup: async () => undefined,
    },
  ];
  if (redisUrl) {
    const prefixes: string[] = [];
    adapters.push({
      name: 'redis',
      create: (prefix = uniquePrefix('contract'), options = OPTIONS) => {
        prefixes.push(prefix);
        return createRedisStore(redisUrl!, prefix, options);
      },
      cleanup: async () => {
        await Promise.all(prefixes.splice(0).map(dropPrefix));
      },
    });
  }
  if (redisClusterNodes) {
    const prefixes: string[] = [];
    adapters.push({
      name: 'redis cluster',
      create: (prefix = uniquePrefix('contract'), options = OPTIONS) => {
        prefixes.push(prefix);
        return createRedisStore(clusterTarget(), prefix, options);
      },
      cleanup: async () => {
        await Promise.all(prefixes.splice(0).map((p) => dropClusterPrefix(p)));
      },
    });
  }
  return adapters;
}
