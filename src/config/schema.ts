import { z } from 'zod';
import { modelEntrySchema } from '../catalog/config';

const ms = z.number().int().nonnegative();
const url = z.url({ protocol: /^https?$/ });

export const rateLimitSchema = z.strictObject({
  ratePerSec: z.number().positive(),
  burst: z.number().int().positive(),
});
export type RateLimit = z.infer<typeof rateLimitSchema>;

/** A vendor key's stable, non-secret name: what metrics and logs show for it. */
const vendorKeyId = z
  .string()
  .regex(/^[A-Za-z0-9_.:@-]{1,64}$/, '1 to 64 letters, digits, "_", ".", ":", "@" or "-"');
/** Share of the rotation (smooth weighted round robin); 0 = standby, used only when no weighted key is healthy. */
const weight = z.number().int().nonnegative();

const vendorKeySchema = z.strictObject({
  /** Default: `k-` and the first 12 hex digits of the key's sha256. */
  id: vendorKeyId.optional(),
  key: z.string().min(1),
  /** Default 1 (a fallback's keys: the fallback's weight). */
  weight: weight.optional(),
});

/** Another origin serving the same API (a second region, a compatible host), tried when the primary keys fail. */
const vendorFallbackSchema = z.strictObject({
  baseUrl: url,
  /** Keys for this origin; neither `apiKeys` nor `keys` = the vendor's own keys. */
  apiKeys: z.array(z.string().min(1)).optional(),
  keys: z.array(vendorKeySchema).optional(),
  /** Weight of each of its keys (a key's own weight wins); default 0: standby. */
  weight: weight.optional(),
});

const vendorSchema = z
  .strictObject({
    baseUrl: url,
    apiKeys: z.array(z.string().min(1)),
    /** More keys for `baseUrl`, with ids and weights (beside `apiKeys`, which weigh 1 each). */
    keys: z.array(vendorKeySchema).optional(),
    fallbacks: z.array(vendorFallbackSchema).optional(),
    /** The version header sent when the client sends none (the messages format's `anthropic-version`). */
    defaultVersion: z.string().min(1).optional(),
  })
  .refine(
    (vendor) => {
      const ids = [...(vendor.keys ?? []), ...(vendor.fallbacks ?? []).flatMap((f) => f.keys ?? [])]
        .map((k) => k.id)
        .filter((id) => id !== undefined);
      return new Set(ids).size === ids.length;
    },
    { message: 'vendor key ids must differ (metrics and logs tell keys apart by id)', path: ['keys'] },
  );

const usdPerMTok = z.number().nonnegative();
/**
 * USD per million tokens. Unset, cache reads cost the input price; cache writes 1.25 times it and hour-long writes
 * twice it (Anthropic's rates, the one vendor that reports writes); reasoning the output price.
 */
const tokenPrices = {
  inputPerMTokUsd: usdPerMTok,
  outputPerMTokUsd: usdPerMTok,
  cacheReadPerMTokUsd: usdPerMTok.optional(),
  cacheWritePerMTokUsd: usdPerMTok.optional(),
  cacheWrite1hPerMTokUsd: usdPerMTok.optional(),
  reasoningPerMTokUsd: usdPerMTok.optional(),
};
const priceSchema = z.strictObject({
  ...tokenPrices,
  /** USD per call of a server-side tool the vendor bills per call (`web_search`), replacing the vendor's rate. */
  toolCallUsd: z.record(z.string().min(1), z.number().nonnegative()).optional(),
  /** Factors of the token prices for a service tier the vendor ran the call at (`priority`), replacing the vendor's. */
  serviceTierFactor: z.record(z.string().min(1), z.number().nonnegative()).optional(),
  /**
   * Prices of a call whose prompt (input, cache reads and cache writes) is longer than `aboveInputTokens`: all of its
   * tokens at these (Anthropic's 1M-token context and Gemini's Pro models double the input price past 200K).
   */
  longContext: z.strictObject({ aboveInputTokens: z.number().int().positive(), ...tokenPrices }).optional(),
});
export type Price = z.infer<typeof priceSchema>;
/** The token prices of one call: a model's own, or its long-context ones. */
export type TokenPrices = Omit<Price, 'toolCallUsd' | 'serviceTierFactor' | 'longContext'>;

export const configSchema = z.strictObject({
  server: z.strictObject({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1),
    /** Base of result-file URLs; unset = this server's own address (`derivedPublicUrl`). */
    publicUrl: url.optional(),
    bodyLimitBytes: z.number().int().positive(),
    shutdownGraceMs: ms,
    trustProxy: z.boolean(),
    /** The request line and headers must arrive within this, from the connection's first byte. */
    headersTimeoutMs: ms.positive(),
    /** The whole request (headers and body) must arrive within this; responses and streams are not limited by it. */
    requestTimeoutMs: ms.positive(),
    /** An idle keep-alive connection (between requests) is closed after this. */
    keepAliveTimeoutMs: ms.positive(),
    /** Connections one process holds at once; past it new connections are closed as they arrive. */
    maxConnections: z.number().int().positive(),
  }),
  store: z
    .strictObject({
      redisUrl: z.url({ protocol: /^rediss?$/ }).optional(),
      /**
       * Sentinel mode: `host:port` of each sentinel; the master named `sentinelName` is found through them and followed
       * across failovers (redisUrl then gives only the password, database and TLS).
       */
      sentinels: z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'host:port')).default([]),
      sentinelName: z.string().min(1).default('mymaster'),
      /**
       * Redis Cluster mode: `host:port` of some of the cluster's nodes (the rest are found from them); keys are then
       * placed by hash tag, one slot per account (src/store/keys.ts). redisUrl gives only the password and TLS.
       */
      clusterNodes: z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, 'host:port')).default([]),
      prefix: z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits, "_", ".", ":" or "-"'),
    })
    .refine((store) => !(store.sentinels.length && store.clusterNodes.length), {
      message: 'set store.sentinels or store.clusterNodes, not both',
      path: ['clusterNodes'],
    }),
  admin: z.strictObject({
    token: z.string().min(16, 'at least 16 characters').optional(),
  }),
  console: z.strictObject({ enabled: z.boolean(), dir: z.string().min(1).optional() }),
  stats: z.strictObject({ stepMs: ms }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  security: z.strictObject({
    allowPrivateTargets: z.boolean(),
    secretsKey: z.string().min(16, 'at least 16 characters').optional(),
  }),
  rateLimits: z.strictObject({ default: rateLimitSchema }),
  sandbox: z.strictObject({ delayMs: ms }),
  callbacks: z.strictObject({
    retryDelaysMs: z.array(ms),
    timeoutMs: ms.positive(),
  }),
  webhooks: z.strictObject({
    headerPrefix: z.string().regex(/^[A-Za-z0-9-]+$/, 'letters, digits or "-"'),
    retryDelaysMs: z.array(ms),
    timeoutMs: ms.positive(),
    rotationGraceMs: ms,
    /** Job slots of one worker that deliveries to one destination (URL origin) may hold at once. */
    perDestinationConcurrency: z.number().int().positive(),
  }),
  batches: z.strictObject({
    ttlMs: ms.positive(),
    maxBodyBytes: z.number().int().positive(),
  }),
  jobs: z.strictObject({
    lockDurationMs: ms.positive(),
    stalledIntervalMs: ms.positive(),
    concurrency: z.number().int().positive(),
  }),
  tasks: z.strictObject({
    retentionMs: ms.positive(),
  }),
  budgets: z.strictObject({
    /** Where every account's budget events go unless the account names its own (budgetWebhookUrl). */
    webhookUrl: url.optional(),
  }),
  accounts: z.strictObject({
    /** Ledger entries (and the idempotency of their references) are kept this long; balances are kept for ever. */
    ledgerRetentionMs: ms.positive(),
    /** Day rows of the usage rollups are kept this long (month rows for ever). */
    usageDayRetentionMs: ms.positive(),
  }),
  gateway: z.strictObject({
    connectTimeoutMs: ms.positive(),
    idleTimeoutMs: ms.positive(),
    maxRequestBytes: z.number().int().positive(),
    usageFlushMs: ms.positive(),
    /**
     * Priced calls' prices are summed per key and model and posted this often (src/gateway/charges.ts); it also paces
     * the charge journal's rewrite, which other processes read as a sign of life after 10 s.
     */
    chargeFlushMs: ms.positive().max(5_000),
    /** Redis mode: where each process journals its charges until the ledger has them (see charge-journal.ts). */
    chargeJournalDir: z.string().min(1),
    objectTtlMs: ms.positive(),
    batchPriceFactor: z.number().nonnegative(),
    /** How a request moves through a vendor's key pool when a key fails (src/gateway/key-pool.ts). */
    failover: z.strictObject({
      /** Tries per request, the first included. */
      attempts: z.number().int().positive(),
      backoffMs: ms,
      maxBackoffMs: ms,
      cooldownMs: ms,
      /** Consecutive 5xx answers from one key that put it in cooldown (a 429 or a connect error does at once). */
      failuresToCooldown: z.number().int().positive(),
      /** How often each replica reads the cooldowns the others recorded. */
      refreshMs: ms.positive(),
    }),
    anthropic: vendorSchema,
    openai: vendorSchema,
    gemini: vendorSchema,
    prices: z.record(z.string(), priceSchema),
  }),
  media: z.strictObject({
    probeTimeoutMs: ms.positive(),
    maxProbeBytes: z.number().int().positive(),
  }),
  /** OpenTelemetry traces (src/observability/tracing.ts): off, at no cost per request, unless an endpoint is set. */
  tracing: z.strictObject({
    /** OTLP/HTTP traces URL, used as is (`http://collector:4318/v1/traces`); unset = no tracer is built. */
    otlpEndpoint: url.optional(),
    serviceName: z.string().min(1),
    /** Share of new traces recorded; a request whose `traceparent` names a parent follows the parent's choice. */
    sampleRatio: z.number().min(0).max(1),
    /** Sent with every export (a collector's ingest token). */
    headers: z
      .record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'an HTTP header name'), z.string())
      .optional(),
    /** Finished spans wait at most this long to go out in one batch. */
    exportDelayMs: ms.positive(),
  }),
  /**
   * Request logs (src/logs): one row per gateway call and task submission. With `databaseUrl` (DATABASE_URL) they go
   * to PostgreSQL; without it each process keeps a bounded ring (`memoryRows`).
   */
  logs: z.strictObject({
    /** false: no request-log rows at all (the audit trail stays). */
    enabled: z.boolean(),
    /** PostgreSQL (`postgres://user:pass@host:5432/db`); unset = the in-process ring. */
    databaseUrl: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
    /** Daily partitions older than this are dropped whole. */
    retentionDays: z.number().int().positive().max(3650),
    /** Rows each process keeps without a database (oldest dropped first). */
    memoryRows: z.number().int().positive(),
    /** Rows waiting for the writer, per process; past it new rows are dropped and counted (never a failed call). */
    bufferRows: z.number().int().positive(),
    /** Rows per insert, and how often the writer sends what is waiting. */
    batchRows: z.number().int().positive().max(10_000),
    flushMs: ms.positive(),
    /** While the database cannot take rows, they are spilled here and replayed when it answers again. */
    spillDir: z.string().min(1),
    /** Spill files of one process past this are not written: rows are then dropped and counted. */
    spillMaxBytes: z.number().int().positive(),
    /** Request and response bodies: `off` (no text of a call anywhere), `metadata` (sizes and types), `full`. */
    bodies: z.enum(['off', 'metadata', 'full'], { error: 'must be one of off, metadata, full' }),
    /** Kept bodies are dropped after this many days (shorter than the rows). */
    bodyRetentionDays: z.number().int().positive().max(3650),
    /** Each body is kept up to this many bytes (its size is recorded whole). */
    bodyMaxBytes: z
      .number()
      .int()
      .positive()
      .max(1 << 20),
    /** Redaction before a body is stored: each pattern's matches become `[redacted]` (emails and keys built in). */
    redact: z.array(z.string().min(1)),
  }),
  /** The audit trail of control-plane changes: the same store as the request logs. */
  audit: z.strictObject({
    retentionDays: z.number().int().positive().max(36500),
    memoryRows: z.number().int().positive(),
  }),
  /** The task-model catalog (shape owned by src/catalog/config.ts). */
  models: z.array(modelEntrySchema).min(1),
});

/** Rules between keys: replicas on one Redis must share the key that signs URLs and encrypts secrets. */
export const checkedConfigSchema = configSchema
  .superRefine((config, ctx) => {
    if (config.server.headersTimeoutMs > config.server.requestTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'headersTimeoutMs'],
        message: 'must not exceed server.requestTimeoutMs (the headers are part of the request)',
      });
    }
    config.logs.redact.forEach((pattern, i) => {
      try {
        new RegExp(pattern, 'g');
      } catch (err) {
        ctx.addIssue({
          code: 'custom',
          path: ['logs', 'redact', i],
          message: `not a regular expression: ${(err as Error).message}`,
        });
      }
    });
    if (config.logs.bodyRetentionDays > config.logs.retentionDays) {
      ctx.addIssue({
        code: 'custom',
        path: ['logs', 'bodyRetentionDays'],
        message: 'must not exceed logs.retentionDays (bodies belong to their rows)',
      });
    }
    if (config.store.redisUrl && !config.security.secretsKey) {
      ctx.addIssue({
        code: 'custom',
        path: ['security', 'secretsKey'],
        message: 'is required when store.redisUrl is set (GENWAY_SECRETS_KEY): replicas share it',
      });
    }
  })
  .transform((config) => ({
    ...config,
    server: {
      ...config.server,
      publicUrl: config.server.publicUrl ?? derivedPublicUrl(config.server.host, config.server.port),
    },
  }));

/**
 * The default of server.publicUrl: the address the server binds, as a client on this machine reaches it (a wildcard
 * host is reached on loopback). Behind a proxy, in a container or with separate workers, set the real one.
 */
export function derivedPublicUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export type Config = z.output<typeof checkedConfigSchema>;
