import type { Config } from '../config';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import { MemoryScheduler } from './memory/scheduler';
import { BullScheduler } from './redis/scheduler';
import { createMemoryStore } from './memory';
import { createRedisStore, redisTarget } from './redis';
import type { Store } from './types';

export * from './types';

/** The one place that knows which adapter runs: Redis when `store.redisUrl` is set, memory otherwise. */
export function createStore(config: Config): Store {
  const options = {
    taskRetentionMs: config.tasks.retentionMs,
    ledgerRetentionMs: config.accounts.ledgerRetentionMs,
    usageDayRetentionMs: config.accounts.usageDayRetentionMs,
  };
  return config.store.redisUrl
    ? createRedisStore(redisTarget(config.store), config.store.prefix, options)
    : createMemoryStore(options);
}

/** In-process timers in embedded mode, BullMQ on the store's Redis in clustered mode. */
export function createScheduler(config: Config, logger: Logger): Scheduler {
  return config.store.redisUrl
    ? new BullScheduler(redisTarget(config.store), config.store.prefix, config.jobs, logger)
    : new MemoryScheduler(logger);
}
