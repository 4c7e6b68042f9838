import type { Clock } from '../clock';
import type { Config } from '../config';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { OutboundClient } from '../outbound/types';
import { signDelivery, type WebhookSecrets } from './secrets';
import type { Deliveries, DeliveryRequest } from './types';

export const DELIVERY_QUEUE = 'deliveries';
const MAX_RESPONSE_BYTES = 64 * 1024;

interface DeliveryJob {
  request: DeliveryRequest;
  attempt: number;
  /** When the event was first enqueued: a revoke after it suppresses the delivery. */
  enqueuedAt: number;
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
  private readonly headers: { eventId: string; timestamp: string; signature: string };

  constructor(
    private readonly deps: {
      scheduler: Scheduler;
      outbound: OutboundClient;
      secrets: WebhookSecrets;
      clock: Clock;
      logger: Logger;
      metrics: Metrics;
      config: Pick<Config, 'callbacks' | 'webhooks'>;
    },
  ) {
    const { callbacks, webhooks } = deps.config;
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
    const prefix = `X-${webhooks.headerPrefix}`;
    this.headers = {
      eventId: `${prefix}-Event-Id`,
      timestamp: `${prefix}-Timestamp`,
      signature: `${prefix}-Signature`,
    };
  }

  async enqueue(request: DeliveryRequest): Promise<void> {
    const job: DeliveryJob = { request, attempt: 1, enqueuedAt: this.deps.clock.now() };
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, job, { jobId: `${request.eventId}:1` });
  }

  registerWorker(): void {
    this.deps.scheduler.work<DeliveryJob>(DELIVERY_QUEUE, (job) => this.attempt(job));
  }

  private count(kind: DeliveryRequest['kind'], outcome: string): void {
    this.deps.metrics.deliveries.inc({ kind, outcome });
  }

  private async attempt(job: DeliveryJob): Promise<void> {
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
      logger.info(
        { eventId: request.eventId, kind: request.kind },
        'delivery suppressed: secret revoked or expired',
      );
      return;
    }

    const policy = this.policies[request.kind];
    const timestamp = Math.floor(clock.now() / 1000);
    const started = performance.now();
    let failure: string;
    try {
      const res = await outbound.fetch(request.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Genway-Webhooks/1',
          [this.headers.eventId]: request.eventId,
          [this.headers.timestamp]: String(timestamp),
          [this.headers.signature]: signDelivery(signing.secret, request.eventId, timestamp, request.body),
        },
        body: request.body,
        timeoutMs: policy.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
      this.deps.metrics.deliveryDuration.observe(
        { kind: request.kind },
        (performance.now() - started) / 1000,
      );
      if (policy.accepts(res.status)) {
        this.count(request.kind, 'delivered');
        return;
      }
      failure = `HTTP ${res.status}`;
    } catch (err) {
      failure = (err as Error).message;
    }

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
    const next: DeliveryJob = { ...job, attempt: job.attempt + 1 };
    await this.deps.scheduler.enqueue(DELIVERY_QUEUE, next, {
      jobId: `${request.eventId}:${next.attempt}`,
      delayMs: delay,
    });
  }
}
