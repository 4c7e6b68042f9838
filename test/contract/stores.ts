import { createMemoryStore } from '../../src/store/memory';
import { createRedisStore } from '../../src/store/redis';
import type { Store } from '../../src/store';
import { dropPrefix, redisUrl, uniquePrefix } from '../helpers/redis';

export interface StoreAdapter {
  name: string;
  /** A fresh, empty store; `prefix` lets two instances share one Redis namespace. */
  create(prefix?: string): Store;
  cleanup(): Promise<void>;
}

/** Every Store adapter the contract suites run against: memory always, Redis when one answers. */
export function storeAdapters(): StoreAdapter[] {
  const adapters: StoreAdapter[] = [
    { name: 'memory', create: () => createMemoryStore(), cleanup: async () => undefined },
  ];
  if (redisUrl) {
    const prefixes: string[] = [];
    adapters.push({
      name: 'redis',
      create: (prefix = uniquePrefix('contract')) => {
        prefixes.push(prefix);
        return createRedisStore(redisUrl!, prefix);
      },
      cleanup: async () => {
        await Promise.all(prefixes.splice(0).map(dropPrefix));
      },
    });
  }
  return adapters;
}
