/**
 * Signed outbound notifications: single-task callbacks and per-item batch webhooks share one delivery engine
 * (durable jobs on the `deliveries` queue, the outbound client, the account's webhook secret for signing).
 */
export interface DeliveryRequest {
  kind: 'callback' | 'webhook';
  accountId: string;
  url: string;
  /** The exact bytes sent and signed. */
  body: string;
  /** Stable across retries of this event (X-Genway-Event-Id); also the job id that deduplicates the enqueue. */
  eventId: string;
  /** Webhooks: the secret version the batch was accepted with. Callbacks: omitted = the current secret. */
  secretVersion?: number;
  /** What the event is about, for the delivery log's filters. */
  taskId?: string;
  batchId?: string;
}

export interface Deliveries {
  /** Schedules the first attempt now; retries follow `callbacks.*` or `webhooks.*` policy. Idempotent per eventId. */
  enqueue(request: DeliveryRequest): Promise<void>;
}
