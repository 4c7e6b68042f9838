/**
 * Durable background work. Embedded mode: in-process timers (lost with the process, as all embedded state is).
 * Redis mode: BullMQ queues under `${store.prefix}:bull`, so a job acknowledged before a crash is run by another
 * worker (at-least-once: handlers must be idempotent).
 */
export type QueueName = 'task-progress' | 'deliveries';

export interface JobOptions {
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /**
   * Deduplication: while a job with this id is waiting, delayed or active, adding it again does nothing. So a job
   * that schedules its own next attempt must give it a different id (e.g. `${eventId}:attempt:2`).
   */
  jobId?: string;
}

export interface JobContext {
  jobId: string;
  /** How many times this job ran before and threw (0 on the first run). */
  attemptsMade: number;
}

/**
 * A handler that throws is retried with exponential backoff (a bounded number of times): that is for unexpected
 * faults (Redis blip, bug). Scheduled retries with their own delays (callbacks, webhooks) are new jobs that the
 * handler enqueues itself before returning normally.
 */
export type JobHandler<T> = (payload: T, context: JobContext) => Promise<void>;

export interface Scheduler {
  enqueue<T extends object>(queue: QueueName, payload: T, options?: JobOptions): Promise<void>;
  /** Makes this process a worker of `queue`. Only processes that run workers call it. */
  work<T extends object>(queue: QueueName, handler: JobHandler<T>): void;
  /**
   * Stops taking jobs and lets running handlers finish for up to `graceMs`, then stops waiting for them (a handler
   * still running is abandoned: in Redis mode its job is run again by another worker once its lock lapses) and
   * closes connections.
   */
  close(graceMs?: number): Promise<{ abandoned: boolean }>;
}

/** Retries of a handler that throws: 1 s, 2 s, 4 s ... capped at 60 s, at most MAX_ATTEMPTS runs. */
export const MAX_ATTEMPTS = 8;
export function retryDelayMs(attemptsMade: number): number {
  return Math.min(60_000, 1000 * 2 ** (attemptsMade - 1));
}
