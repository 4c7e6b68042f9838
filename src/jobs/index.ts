import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import { BullScheduler } from './bullmq';
import { MemoryScheduler } from './memory';
import type { Scheduler } from './types';

export * from './types';

/** In-process timers in embedded mode, BullMQ on the store's Redis in clustered mode. */
export function createScheduler(config: Config, logger: Logger): Scheduler {
  return config.store.redisUrl
    ? new BullScheduler(config.store.redisUrl, config.store.prefix, config.jobs, logger)
    : new MemoryScheduler(logger);
}
