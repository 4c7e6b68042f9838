import { z } from 'zod';

/** One route of a model: where its tasks run. `auto` takes the first healthy, `value` the cheapest, `official` the marked one. */
export const modelRouteSchema = z.strictObject({
  id: z.string().min(1),
  provider: z.enum(['sandbox', 'relay']),
  /** relay: the upstream Genway-compatible API root (without /api/v1). */
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  apiKey: z.string().min(1).optional(),
  /** relay: the model id upstream (default: the same id). */
  upstreamModel: z.string().min(1).optional(),
  official: z.boolean().default(false),
  /** Relative cost of the route for `provider: value` (lower is cheaper). */
  costFactor: z.number().positive().default(1),
  timeoutMs: z.number().int().positive().default(30_000),
  /** relay: overrides of the model's polling guidance (tests, fast upstreams). */
  firstPollMs: z.number().int().nonnegative().optional(),
  pollIntervalMs: z.number().int().positive().optional(),
});

export const modelEntrySchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'lowercase letters, digits, ".", "_" or "-"'),
  family: z.enum([
    'multimodal-video',
    'first-frame-video',
    'short-clip-video',
    'image-gen',
    'basic-image',
    'basic-video',
    'music',
  ]),
  slug: z.string().min(1).optional(),
  displayName: z.string().min(1).optional(),
  routes: z
    .array(modelRouteSchema)
    .min(1)
    .default([{ id: 'sandbox', provider: 'sandbox', official: true, costFactor: 1, timeoutMs: 30_000 }]),
});

export type ModelRoute = z.output<typeof modelRouteSchema>;
export type ModelEntry = z.output<typeof modelEntrySchema>;
