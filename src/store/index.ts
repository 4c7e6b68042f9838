import type { Config } from '../config';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import { MemoryScheduler } from './memory/scheduler';
import { createMemoryStore } from './memory';
import type * as RedisAdapters from './redis';
import type * as RedisScheduler from './redis/scheduler';
import type { Store } from './types';

export * from './types';

/**
 * The Redis adapters are loaded in Redis mode only: ioredis and BullMQ were a fifth of an embedded start
 * (docs/performance.md, start-up).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const redis = () => require('./redis') as typeof RedisAdapters;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bull = () => require('./redis/scheduler') as typeof RedisScheduler;

/** The one place that knows which adapter runs: Redis when `store.redisUrl` is set, memory otherwise. */
export function createStore(config: Config): Store {
  const options = {
    taskRetentionMs: config.tasks.retentionMs,
    ledgerRetentionMs: config.accounts.ledgerRetentionMs,
    usageDayRetentionMs: config.accounts.usageDayRetentionMs,
  };
  return config.store.redisUrl
    ? redis().createRedisStore(redis().redisTarget(config.store), config.store.prefix, options)
    : createMemoryStore(options);
}

/** In-process timers in embedded mode, BullMQ on the store's Redis in clustered mode. */
export function createScheduler(config: Config, logger: Logger): Scheduler {
  return config.store.redisUrl
    ? new (bull().BullScheduler)(redis().redisTarget(config.store), config.store.prefix, config.jobs, logger)
    : new MemoryScheduler(logger);
}
