import type { Clock } from '../clock';
import type { Config } from '../config';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { OutboundClient } from '../outbound/types';
import type { WebhookScheme } from '../accounts/store';
import type { WebhookSecrets } from './secrets';
import { DestinationSlots, type Slot } from './destinations';
import { genwayHeaderNames, signatureHeaders, type HeaderNames } from './signing';
import { ApiError } from '../errors';
import { newAccountId } from '../ids';
import { encodeCursor, parseListQuery } from '../listing';
import type { DeliveryAttempt, DeliveryLogStore } from './store';
import type { Deliveries, DeliveryRequest } from './types';
import { z } from 'zod';

export const DELIVERY_QUEUE = 'deliveries';
const MAX_RESPONSE_BYTES = 64 * 1024;

interface DeliveryJob {
  request: DeliveryRequest;
  attempt: number;
  /** When the event was first enqueued: a revoke after it suppresses the delivery. */
  enqueuedAt: number;
  /** How often this attempt was put off because its destination was busy (sets the next wait). */
  deferrals?: number;
  /** A redelivery a client asked for (its attempts say so in the log). */
  redelivery?: boolean;
}

const logFilters = {
  taskId: z.string().optional(),
  batchId: z.string().optional(),
  status: z
    .enum(['delivered', 'failed', 'suppressed'], { error: 'must be one of delivered, failed, suppressed' })
    .optional(),
  kind: z.enum(['callback', 'webhook'], { error: 'must be one of callback, webhook' }).optional(),
};

/** The log's view of an attempt: everything but the body it sent. */
function attemptView({ body: _body, secretVersion: _version, ...view }: DeliveryAttempt) {
  return view;
}

/** A put-off attempt waits 1 s, 2 s, 4 s ... up to this, with jitter: thousands queued for one slow receiver idle. */
const MAX_DEFER_MS = 30_000;

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}

function destinationOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url; // the outbound client refuses it with its own reason
  }
}

interface Policy {
  delaysMs: readonly number[];
  timeoutMs: number;
  accepts(status: number): boolean;
}

/**
 * Signed callbacks and batch webhooks: one durable job per attempt, each attempt signed at send time, retried on
 * the configured schedule, suppressed once the account revokes its secrets.
 */
export class DeliveryEngine implements Deliveries {
  private readonly policies: Record<DeliveryRequest['kind'], Policy>;
  private readonly headers: HeaderNames;
  /** Attempts in flight in this process per destination (URL origin). */
  private readonly slots: DestinationSlots;

  constructor(
    private readonly deps: {
      scheduler: Scheduler;
      outbound: OutboundClient;
      secrets: WebhookSecrets;
      clock: Clock;
      logger: Logger;
      metrics: Metrics;
      /** Every attempt, kept as long as tasks are (tasks.retentionMs). */
      log: DeliveryLogStore;
      /** The account's signing scheme, read at each attempt: a switch applies to what is sent after it. */
      schemeOf: (accountId: string) => Promise<WebhookScheme>;
      config: Pick<Config, 'callbacks' | 'webhooks' | 'tasks'>;
    },
  ) {
    const { callbacks, webhooks } = deps.config;
    this.slots = new DestinationSlots(webhooks.perDestinationConcurrency);
    this.policies = {
      // The spec asks a callback receiver for exactly 200; a webhook receiver for any 2xx.
      callback: {
        delaysMs: callbacks.retryDelaysMs,
        timeoutMs: callbacks.timeoutMs,
        accepts: (s) => s === 200,
      },
      webhook: {
        delaysMs: webhooks.retryDelaysMs,
        timeoutMs: webhooks.timeoutMs,
        accepts: (s) => s >= 200 && s < 300,
      },
    };
    this.headers = genwayHeaderNames(webhooks.headerPrefix);
  }

  async enqueue(request: DeliveryRequest): Promise<void> {
    const job: DeliveryJob = { request, attempt: 1, enqueuedAt: this.deps.clock.now() };
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, job, { jobId: `${request.eventId}:1` });
  }

  /** GET /webhooks/deliveries?taskId=&batchId=&status=&kind=&createdAfter=&createdBefore=&limit=&cursor= */
  async list(accountId: string, query: unknown): Promise<{ items: unknown[]; nextCursor: string | null }> {
    const { taskId, batchId, status, kind, ...page } = parseListQuery(query, logFilters);
    const found = await this.deps.log.list(
      accountId,
      page,
      (a) =>
        (taskId === undefined || a.taskId === taskId) &&
        (batchId === undefined || a.batchId === batchId) &&
        (status === undefined || a.status === status) &&
        (kind === undefined || a.kind === kind),
      this.deps.clock.now(),
    );
    return { items: found.items.map(attemptView), nextCursor: encodeCursor(found.next) };
  }

  /**
   * POST /webhooks/deliveries/{id}/redeliver: sends that attempt's event again, same body and event id (a receiver
   * that deduplicates by it sees a repeat), signed at send time, with the retry schedule of a first sending.
   */
  async redeliver(accountId: string, deliveryId: string): Promise<{ deliveryId: string; eventId: string }> {
    const original = await this.deps.log.get(deliveryId);
    if (!original || original.accountId !== accountId)
      throw new ApiError('not_found', `No delivery ${deliveryId}`);
    const request: DeliveryRequest = {
      kind: original.kind,
      accountId,
      url: original.url,
      body: original.body,
      eventId: original.eventId,
      secretVersion: original.secretVersion,
      taskId: original.taskId,
      batchId: original.batchId,
    };
    const now = this.deps.clock.now();
    const job: DeliveryJob = { request, attempt: 1, enqueuedAt: now, redelivery: true };
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, job, {
      jobId: `${request.eventId}:redeliver:${newAccountId('dlv', accountId)}`,
    });
    return { deliveryId, eventId: request.eventId };
  }

  private async logAttempt(
    job: DeliveryJob,
    outcome: Pick<DeliveryAttempt, 'status' | 'httpStatus' | 'latencyMs' | 'error'>,
  ): Promise<void> {
    const { request } = job;
    const attempt: DeliveryAttempt = {
      deliveryId: newAccountId('dlv', request.accountId),
      eventId: request.eventId,
      accountId: request.accountId,
      kind: request.kind,
      url: request.url,
      ...(request.taskId ? { taskId: request.taskId } : {}),
      ...(request.batchId ? { batchId: request.batchId } : {}),
      attempt: job.attempt,
      ...(job.redelivery ? { redelivery: true } : {}),
      at: this.deps.clock.now(),
      ...outcome,
      body: request.body,
      ...(request.secretVersion === undefined ? {} : { secretVersion: request.secretVersion }),
    };
    // The log is a record, not the delivery: a failure to write it must not send the event again.
    await this.deps.log
      .record(attempt, this.deps.config.tasks.retentionMs)
      .catch((err: Error) => this.deps.logger.warn({ err, eventId: request.eventId }, 'delivery not logged'));
  }

  registerWorker(): void {
    this.deps.scheduler.work<DeliveryJob>(DELIVERY_QUEUE, (job) => this.run(job));
  }

  private count(kind: DeliveryRequest['kind'], outcome: string): void {
    this.deps.metrics.deliveries.inc({ kind, outcome });
  }

  /**
   * Fairness: one destination (URL origin) holds at most `webhooks.perDestinationConcurrency` of this worker's job
   * slots. An attempt for a destination already at its share waits briefly when that receiver answers fast, and is
   * otherwise put off (the same attempt, re-enqueued with a growing delay) instead of waiting in a slot, so a receiver
   * that is slow or never answers delays only its own deliveries (destinations.ts).
   */
  private async run(job: DeliveryJob): Promise<void> {
    const destination = destinationOf(job.request.url);
    const slot = await this.slots.acquire(destination);
    if (!slot) return this.defer(job);
    try {
      await this.attempt(job, slot);
    } finally {
      slot.release();
    }
  }

  private async defer(job: DeliveryJob): Promise<void> {
    const deferrals = (job.deferrals ?? 0) + 1;
    const base = Math.min(MAX_DEFER_MS, 1000 * 2 ** (deferrals - 1));
    this.count(job.request.kind, 'deferred');
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, { ...job, deferrals } satisfies DeliveryJob, {
      jobId: `${job.request.eventId}:${job.attempt}:deferred:${deferrals}`,
      delayMs: Math.round(base * (0.75 + Math.random() / 2)),
    });
  }

  private async attempt(job: DeliveryJob, slot: Slot): Promise<void> {
    const { request } = job;
    const { secrets, clock, outbound, logger } = this.deps;
    const revokedAt = await secrets.revokedAt(request.accountId);
    const signing =
      revokedAt !== null && revokedAt >= job.enqueuedAt
        ? null
        : request.secretVersion === undefined
          ? await secrets.current(request.accountId)
          : await secrets.forVersion(request.accountId, request.secretVersion);
    if (!signing) {
      this.count(request.kind, 'suppressed');
      await this.logAttempt(job, {
        status: 'suppressed',
        httpStatus: null,
        latencyMs: null,
        error: 'signing secret revoked or retired',
      });
      logger.info(
        { eventId: request.eventId, kind: request.kind },
        'delivery suppressed: secret revoked or expired',
      );
      return;
    }

    const scheme = await this.deps.schemeOf(request.accountId);
    const signWith =
      scheme === 'standard' ? await secrets.withGraceSecrets(request.accountId, signing) : [signing];
    const policy = this.policies[request.kind];
    const timestamp = Math.floor(clock.now() / 1000);
    const started = performance.now();
    let failure: string;
    let httpStatus: number | null = null;
    try {
      slot.sending();
      const res = await outbound.fetch(request.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Genway-Webhooks/1',
          ...signatureHeaders(
            scheme,
            this.headers,
            signWith.map((s) => s.secret),
            request.eventId,
            timestamp,
            request.body,
          ),
        },
        body: request.body,
        timeoutMs: policy.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
      slot.answered();
      this.deps.metrics.deliveryDuration.observe(
        { kind: request.kind },
        (performance.now() - started) / 1000,
      );
      httpStatus = res.status;
      if (policy.accepts(res.status)) {
        this.count(request.kind, 'delivered');
        await this.logAttempt(job, {
          status: 'delivered',
          httpStatus,
          latencyMs: elapsed(started),
          error: null,
        });
        return;
      }
      failure = `HTTP ${res.status}`;
    } catch (err) {
      slot.answered();
      failure = (err as Error).message;
    }
    await this.logAttempt(job, { status: 'failed', httpStatus, latencyMs: elapsed(started), error: failure });

    const delay = policy.delaysMs[job.attempt - 1];
    if (delay === undefined) {
      this.count(request.kind, 'abandoned');
      logger.warn(
        { eventId: request.eventId, kind: request.kind, attempts: job.attempt, failure },
        'delivery abandoned',
      );
      return;
    }
    this.count(request.kind, 'retry_scheduled');
    const next: DeliveryJob = { ...job, attempt: job.attempt + 1, deferrals: 0 };
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, next, {
      jobId: `${request.eventId}:${next.attempt}`,
      delayMs: delay,
    });
  }
}
