import { withinGrace } from '../../clock';
import type { Logger } from '../../observability/logger';
import {
  MAX_ATTEMPTS,
  retryDelayMs,
  type JobHandler,
  type JobOptions,
  type QueueName,
  type Scheduler,
} from '../../jobs/types';

interface PendingJob {
  queue: QueueName;
  payload: object;
  jobId?: string;
  attemptsMade: number;
}

/**
 * Embedded mode: jobs are timers in this process (lost with it, like all embedded state). Jobs enqueued before a
 * worker registers wait for it.
 */
export class MemoryScheduler implements Scheduler {
  private readonly handlers = new Map<QueueName, JobHandler<object>>();
  private readonly backlog: PendingJob[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly liveIds = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly logger: Logger) {}

  async enqueue<T extends object>(queue: QueueName, payload: T, options: JobOptions = {}): Promise<void> {
    if (this.closed) return;
    if (options.jobId) {
      const key = `${queue}\u0000${options.jobId}`;
      if (this.liveIds.has(key)) return;
      this.liveIds.add(key);
    }
    this.schedule({ queue, payload, jobId: options.jobId, attemptsMade: 0 }, options.delayMs ?? 0);
  }

  work<T extends object>(queue: QueueName, handler: JobHandler<T>): void {
    this.handlers.set(queue, handler as JobHandler<object>);
    for (const job of this.backlog.splice(0)) this.schedule(job, 0);
  }

  async close(graceMs = Infinity): Promise<{ abandoned: boolean }> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (await withinGrace(Promise.allSettled([...this.running]), graceMs)) return { abandoned: false };
    this.logger.warn({ graceMs }, 'jobs still running at the end of the shutdown grace; abandoned');
    return { abandoned: true };
  }

  private schedule(job: PendingJob, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.run(job);
    }, delayMs);
    this.timers.add(timer);
  }

  private run(job: PendingJob): void {
    const handler = this.handlers.get(job.queue);
    if (!handler) {
      this.backlog.push(job);
      return;
    }
    const jobId = job.jobId ?? 'anonymous';
    const execution = handler(job.payload, { jobId, attemptsMade: job.attemptsMade }).then(
      () => this.forget(job),
      (err: unknown) => {
        const attemptsMade = job.attemptsMade + 1;
        if (attemptsMade >= MAX_ATTEMPTS || this.closed) {
          this.logger.error({ err, queue: job.queue, jobId, attemptsMade }, 'job failed for good');
          this.forget(job);
          return;
        }
        this.logger.warn({ err, queue: job.queue, jobId, attemptsMade }, 'job failed; retrying');
        this.schedule({ ...job, attemptsMade }, retryDelayMs(attemptsMade));
      },
    );
    this.running.add(execution);
    void execution.finally(() => this.running.delete(execution));
  }

  private forget(job: PendingJob): void {
    if (job.jobId) this.liveIds.delete(`${job.queue}\u0000${job.jobId}`);
  }
}
