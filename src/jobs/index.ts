import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import { redisTarget } from '../store/redis/connection';
import { BullScheduler } from './bullmq';
import { MemoryScheduler } from './memory';
import type { Scheduler } from './types';

export * from './types';

/** In-process timers in embedded mode, BullMQ on the store's Redis in clustered mode. */
export function createScheduler(config: Config, logger: Logger): Scheduler {
  return config.store.redisUrl
    ? new BullScheduler(redisTarget(config.store), config.store.prefix, config.jobs, logger)
    : new MemoryScheduler(logger);
}
