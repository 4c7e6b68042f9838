import type { Config } from '../config';
import { createMemoryStore } from './memory';
import { createRedisStore, redisTarget } from './redis';
import type { Store } from './types';

export * from './types';

/** The one place that knows which adapter runs: Redis when `store.redisUrl` is set, memory otherwise. */
export function createStore(config: Config): Store {
  const options = {
    taskRetentionMs: config.tasks.retentionMs,
    ledgerRetentionMs: config.accounts.ledgerRetentionMs,
  };
  return config.store.redisUrl
    ? createRedisStore(redisTarget(config.store), config.store.prefix, options)
    : createMemoryStore(options);
}
