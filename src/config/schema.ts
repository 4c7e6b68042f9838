import { z } from 'zod';
import { modelEntrySchema } from '../catalog/config';

const ms = z.number().int().nonnegative();
const url = z.url({ protocol: /^https?$/ });

export const rateLimitSchema = z.strictObject({
  ratePerSec: z.number().positive(),
  burst: z.number().int().positive(),
});
export type RateLimit = z.infer<typeof rateLimitSchema>;

const vendorSchema = z.strictObject({
  baseUrl: url,
  apiKeys: z.array(z.string().min(1)),
  /** The version header sent when the client sends none (the messages format's `anthropic-version`). */
  defaultVersion: z.string().min(1).optional(),
});

const usdPerMTok = z.number().nonnegative();
/** USD per million tokens; cache reads and writes default to the input price, reasoning to the output price. */
const priceSchema = z.strictObject({
  inputPerMTokUsd: usdPerMTok,
  outputPerMTokUsd: usdPerMTok,
  cacheReadPerMTokUsd: usdPerMTok.optional(),
  cacheWritePerMTokUsd: usdPerMTok.optional(),
  reasoningPerMTokUsd: usdPerMTok.optional(),
});
export type Price = z.infer<typeof priceSchema>;

export const configSchema = z.strictObject({
  server: z.strictObject({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1),
    publicUrl: url,
    bodyLimitBytes: z.number().int().positive(),
    shutdownGraceMs: ms,
    trustProxy: z.boolean(),
  }),
  store: z.strictObject({
    redisUrl: z.url({ protocol: /^rediss?$/ }).optional(),
    prefix: z.string().regex(/^[A-Za-z0-9_.:-]+$/, 'letters, digits, "_", ".", ":" or "-"'),
  }),
  admin: z.strictObject({
    token: z.string().min(16, 'at least 16 characters').optional(),
  }),
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
  gateway: z.strictObject({
    connectTimeoutMs: ms.positive(),
    idleTimeoutMs: ms.positive(),
    maxRequestBytes: z.number().int().positive(),
    usageFlushMs: ms.positive(),
    objectTtlMs: ms.positive(),
    batchPriceFactor: z.number().nonnegative(),
    anthropic: vendorSchema,
    openai: vendorSchema,
    gemini: vendorSchema,
    prices: z.record(z.string(), priceSchema),
  }),
  media: z.strictObject({
    probeTimeoutMs: ms.positive(),
    maxProbeBytes: z.number().int().positive(),
  }),
  /** The task-model catalog (shape owned by src/catalog/config.ts). */
  models: z.array(modelEntrySchema).min(1),
});

/** Rules between keys: replicas on one Redis must share the key that signs URLs and encrypts secrets. */
export const checkedConfigSchema = configSchema.superRefine((config, ctx) => {
  if (config.store.redisUrl && !config.security.secretsKey) {
    ctx.addIssue({
      code: 'custom',
      path: ['security', 'secretsKey'],
      message: 'is required when store.redisUrl is set (GENWAY_SECRETS_KEY): replicas share it',
    });
  }
});

export type Config = z.infer<typeof configSchema>;
