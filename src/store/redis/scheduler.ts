import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Config } from '../../config';
import type { Logger } from '../../observability/logger';
import { redisKeys } from '../keys';
import { createSlotConnection, isClusterTarget, type RedisClient, type RedisTarget } from './connection';
import { withinGrace } from '../../clock';
import {
  MAX_ATTEMPTS,
  type JobHandler,
  type JobOptions,
  type QueueName,
  type Scheduler,
} from '../../jobs/types';

/** BullMQ refuses ':' in custom ids; ours use it as a separator. */
function bullJobId(jobId: string): string {
  return jobId.replaceAll(':', '~');
}

/**
 * Clustered mode: BullMQ queues in Redis. An acknowledged job survives any process's crash: a job whose worker
 * died is taken over by another worker once its lock (jobs.lockDurationMs) lapses.
 */
export class BullScheduler implements Scheduler {
  private readonly connection: RedisClient;
  private readonly queues = new Map<QueueName, Queue>();
  private readonly workers: Worker[] = [];
  private readonly prefix: string;

  constructor(
    redis: RedisTarget,
    storePrefix: string,
    private readonly jobs: Config['jobs'],
    private readonly logger: Logger,
  ) {
    this.prefix = redisKeys(storePrefix, isClusterTarget(redis)).bullPrefix;
    // BullMQ needs maxRetriesPerRequest: null on the connections its workers block on. Every BullMQ key carries the
    // one hash tag of the prefix, so in a Redis Cluster it talks to one master: a plain connection that finds that
    // master again after a failover, rather than a Cluster client (docs/reliability.md, "Redis Cluster").
    this.connection = createSlotConnection(redis, this.prefix, 'genway-jobs', { maxRetriesPerRequest: null });
  }

  async enqueue<T extends object>(queue: QueueName, payload: T, options: JobOptions = {}): Promise<void> {
    await this.queue(queue).add(queue, payload, {
      delay: options.delayMs,
      jobId: options.jobId ? bullJobId(options.jobId) : undefined,
      attempts: MAX_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: true,
      removeOnFail: { count: 1000 },
    });
  }

  work<T extends object>(queue: QueueName, handler: JobHandler<T>): void {
    const worker = new Worker(
      queue,
      async (job) => handler(job.data as T, { jobId: job.id ?? '', attemptsMade: job.attemptsMade }),
      {
        connection: this.connection as unknown as ConnectionOptions,
        prefix: this.prefix,
        concurrency: this.jobs.concurrency,
        lockDuration: this.jobs.lockDurationMs,
        stalledInterval: this.jobs.stalledIntervalMs,
        // A job whose worker crashed is retried, not failed: at-least-once.
        maxStalledCount: MAX_ATTEMPTS,
      },
    );
    worker.on('failed', (job, err) =>
      this.logger.warn({ err, queue, jobId: job?.id, attemptsMade: job?.attemptsMade }, 'job attempt failed'),
    );
    worker.on('error', (err) => this.logger.error({ err, queue }, 'job worker error'));
    this.workers.push(worker);
  }

  async close(graceMs = Infinity): Promise<{ abandoned: boolean }> {
    const finished = Promise.allSettled(this.workers.map((w) => w.close()));
    if (!(await withinGrace(finished, graceMs))) {
      this.logger.warn(
        { graceMs },
        'jobs still running at the end of the shutdown grace; left to other workers',
      );
      // Nothing more is closed: the caller exits the process. The jobs keep their locks until jobs.lockDurationMs,
      // then another worker takes them over as stalled and runs them again.
      return { abandoned: true };
    }
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    await this.connection.quit().catch(() => this.connection.disconnect());
    return { abandoned: false };
  }

  private queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, {
        connection: this.connection as unknown as ConnectionOptions,
        prefix: this.prefix,
      });
      queue.on('error', (err) => this.logger.error({ err, queue: name }, 'job queue error'));
      this.queues.set(name, queue);
    }
    return queue;
  }
}
