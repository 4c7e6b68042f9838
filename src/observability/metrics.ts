import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot-metrics';

/**
 * Every Prometheus metric Genway exports, defined in one place. Labels never carry key or account ids:
 * their cardinality would grow with the customer base (a vendor key's configured id is a label: those are few and
 * fixed by the config, and never the key itself). What is touched on every request uses the lean
 * HotCounter / HotHistogram (same registry, same text format); the rest is plain prom-client.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new HotCounter({
      name: 'genway_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status code',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new HotHistogram({
      name: 'genway_http_request_duration_seconds',
      help: 'Time from request start to the last byte of the response, by route template, method and status code',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    rateLimitRejections: new Counter({
      name: 'genway_rate_limit_rejections_total',
      help: 'Requests refused with 429 by the per-key rate limit, by surface (task_api, gateway)',
      labelNames: ['surface'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'genway_deliveries_total',
      help: 'Callback and webhook delivery attempts by kind and outcome (delivered, retry_scheduled, abandoned, suppressed)',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    deliveryDuration: new Histogram({
      name: 'genway_delivery_duration_seconds',
      help: 'Time for a receiver to answer a delivery attempt, by kind',
      labelNames: ['kind'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    gatewayUpstreamDuration: new HotHistogram({
      name: 'genway_gateway_upstream_duration_seconds',
      help: 'LLM gateway: from sending the request upstream to the last byte of its response, by vendor and status class',
      labelNames: ['vendor', 'status_class'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    }),
    gatewayTimeToFirstByte: new HotHistogram({
      name: 'genway_gateway_upstream_ttfb_seconds',
      help: 'LLM gateway: from sending the request upstream to its response headers, by vendor and status class',
      labelNames: ['vendor', 'status_class'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    gatewayOverhead: new HotHistogram({
      name: 'genway_gateway_overhead_seconds',
      help: "LLM gateway: Genway's own time per request (total minus the wait for the upstream), by vendor and status class",
      labelNames: ['vendor', 'status_class'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
    gatewayUpstreamResponses: new HotCounter({
      name: 'genway_gateway_upstream_responses_total',
      help: 'LLM gateway: upstream responses by vendor and status code (network errors and timeouts as code 0)',
      labelNames: ['vendor', 'code'] as const,
      registers: [registry],
    }),
    gatewayVendorKeyAttempts: new HotCounter({
      name: 'genway_gateway_vendor_key_attempts_total',
      help: 'LLM gateway: tries on each vendor key (by its configured id, never the key), by outcome (ok, client_error, rate_limited, server_error, connect_error, timeout, error)',
      labelNames: ['vendor', 'key_id', 'outcome'] as const,
      registers: [registry],
    }),
    gatewayVendorKeyCooldown: new Gauge({
      name: 'genway_gateway_vendor_key_cooldown_seconds',
      help: "LLM gateway: seconds left of a vendor key's cooldown as this replica sees it (0 = in the rotation), by vendor and key id",
      labelNames: ['vendor', 'key_id'] as const,
      registers: [registry],
    }),
    gatewayChargesOwed: new Gauge({
      name: 'genway_gateway_charges_owed_usd',
      help: 'LLM gateway: USD this replica served on priced models that the ledger has not confirmed, after its last flush (grows while the store cannot take charges)',
      registers: [registry],
    }),
    gatewayTokens: new Counter({
      name: 'genway_gateway_tokens_total',
      help: 'LLM gateway: tokens by vendor, model and type (input, output, cache_read, cache_write, reasoning)',
      labelNames: ['vendor', 'model', 'type'] as const,
      registers: [registry],
    }),
    logsRowsWritten: new Counter({
      name: 'genway_logs_rows_written_total',
      help: 'Request log and audit rows the log store took, by table (requests, audit)',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    logsRowsDropped: new Counter({
      name: 'genway_logs_rows_dropped_total',
      help: 'Request log and audit rows lost, by table and reason (overload: the writer queue was full; spill_full: the database was away and the spill files reached logs.spillMaxBytes; expired: older than the retention; refused: a batch the database refused as invalid)',
      labelNames: ['table', 'reason'] as const,
      registers: [registry],
    }),
    logsRowsSpilled: new Counter({
      name: 'genway_logs_rows_spilled_total',
      help: 'Rows written to the local spill files while the log database could not take them, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    logsRowsReplayed: new Counter({
      name: 'genway_logs_rows_replayed_total',
      help: 'Spilled rows replayed into the log database once it answered again, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    logsQueueRows: new Gauge({
      name: 'genway_logs_queue_rows',
      help: 'Rows waiting in this process for the log writer, by table',
      labelNames: ['table'] as const,
      registers: [registry],
    }),
    logsSpillBytes: new Gauge({
      name: 'genway_logs_spill_bytes',
      help: "Bytes of this process's spill files not yet replayed into the log database",
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
