import { z } from 'zod';
import { modelEntrySchema } from '../catalog/config';
import { UPSTREAM_TYPES } from '../gateway/upstreams';
import { distinctKeyIds, keyedFields, ms, rateLimitSchema, url, weight } from './fields';

export { rateLimitSchema, type RateLimit } from './fields';

const vendorSchema = z
  .strictObject({
    ...keyedFields,
    /** The version header sent when the client sends none (the messages format's `anthropic-version`). */
    defaultVersion: z.string().min(1).optional(),
  })
  .refine(...distinctKeyIds);

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

/** One of a route's targets: an upstream and the model's name there, or another route (its targets, in its order). */
const routeTargetSchema = z
  .strictObject({
    upstream: z.string().min(1).optional(),
    route: z.string().min(1).optional(),
    /** The model's name at the upstream; default: the route's. */
    model: z.string().min(1).optional(),
    /** Share of the calls (strategy `weighted`); default 1. */
    weight: weight.optional(),
  })
  .refine((t) => (t.upstream === undefined) !== (t.route === undefined), {
    message: 'name an upstream or a route, one of the two',
    path: ['upstream'],
  })
  .refine((t) => t.route === undefined || t.model === undefined, {
    message: "a target naming a route takes that route's models",
    path: ['model'],
  });

/** A model name clients send, mapped to where it runs (docs/decisions.md, "Routes"). */
const routeSchema = z.strictObject({
  model: z.string().min(1).max(256),
  targets: z.array(routeTargetSchema).min(1),
  /** `fallback`: in order, the next when one fails before any byte reached the client; `weighted`: by weight. */
  strategy: z.enum(['fallback', 'weighted']).default('fallback'),
});
export type RouteConfig = z.infer<typeof routeSchema>;
/** The token prices of one call: a model's own, or its long-context ones. */
export type TokenPrices = Omit<Price, 'toolCallUsd' | 'serviceTierFactor' | 'longContext'>;

type UpstreamSchemas = [
  (typeof UPSTREAM_TYPES)[number]['schema'],
  ...(typeof UPSTREAM_TYPES)[number]['schema'][],
];

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
    /** More upstreams, each `{id, type, ...}` (src/gateway/upstreams/): any place a team buys a model. */
    upstreams: z
      .array(z.discriminatedUnion('type', UPSTREAM_TYPES.map((t) => t.schema) as UpstreamSchemas))
      .default([]),
    /** Model names mapped to upstream targets (src/gateway/model-routes.ts). */
    routes: z.array(routeSchema).default([]),
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
    checkRoutes(config.gateway, ctx);
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

/** The upstreams every deployment has: the three vendors of `gateway.anthropic`, `.openai` and `.gemini`. */
export const BUILT_IN_UPSTREAMS = ['anthropic', 'openai', 'gemini'] as const;

/**
 * Routes and upstreams name each other: ids are unique, a target names an upstream or route that exists, and no route
 * reaches itself through the routes it names.
 */
function checkRoutes(gateway: z.infer<typeof configSchema>['gateway'], ctx: z.RefinementCtx): void {
  const upstreams = new Set<string>(BUILT_IN_UPSTREAMS);
  gateway.upstreams.forEach((u, i) => {
    if (upstreams.has(u.id)) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'upstreams', i, 'id'],
        message: (BUILT_IN_UPSTREAMS as readonly string[]).includes(u.id)
          ? `${JSON.stringify(u.id)} is the built-in upstream of gateway.${u.id}`
          : `${JSON.stringify(u.id)} names another upstream too`,
      });
    }
    upstreams.add(u.id);
  });
  const routes = new Map<string, z.infer<typeof routeSchema>>();
  gateway.routes.forEach((r, i) => {
    if (routes.has(r.model)) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'routes', i, 'model'],
        message: `${JSON.stringify(r.model)} has another route too`,
      });
    }
    routes.set(r.model, r);
  });
  gateway.routes.forEach((r, i) =>
    r.targets.forEach((t, j) => {
      const at = ['gateway', 'routes', i, 'targets', j];
      if (t.upstream !== undefined && !upstreams.has(t.upstream)) {
        ctx.addIssue({
          code: 'custom',
          path: [...at, 'upstream'],
          message: `no upstream ${JSON.stringify(t.upstream)} (gateway.upstreams ids and ${BUILT_IN_UPSTREAMS.join(', ')})`,
        });
      }
      if (t.route !== undefined && !routes.has(t.route)) {
        ctx.addIssue({
          code: 'custom',
          path: [...at, 'route'],
          message: `no route ${JSON.stringify(t.route)}`,
        });
      }
    }),
  );
  // A route naming routes that name it back: found by walking each route's references.
  const state = new Map<string, 'walking' | 'done'>();
  const walk = (model: string, trail: string[]): boolean => {
    if (state.get(model) === 'done') return false;
    if (state.get(model) === 'walking') {
      const i = gateway.routes.findIndex((r) => r.model === trail[0]);
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'routes', i, 'targets'],
        message: `routes name each other in a cycle: ${[...trail.slice(trail.indexOf(model)), model].join(' -> ')}`,
      });
      return true;
    }
    state.set(model, 'walking');
    for (const t of routes.get(model)?.targets ?? []) {
      if (t.route !== undefined && routes.has(t.route) && walk(t.route, [...trail, model])) return true;
    }
    state.set(model, 'done');
    return false;
  };
  for (const r of gateway.routes) if (walk(r.model, [])) break;
}

/**
 * The default of server.publicUrl: the address the server binds, as a client on this machine reaches it (a wildcard
 * host is reached on loopback). Behind a proxy, in a container or with separate workers, set the real one.
 */
export function derivedPublicUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export type Config = z.output<typeof checkedConfigSchema>;
