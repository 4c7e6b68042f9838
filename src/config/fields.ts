import { z } from 'zod';

/** Config pieces shared by src/config/schema.ts and the upstream types (src/gateway/upstreams/), which declare their own entries. */

export const ms = z.number().int().nonnegative();
export const url = z.url({ protocol: /^https?$/ });

export const rateLimitSchema = z.strictObject({
  ratePerSec: z.number().positive(),
  burst: z.number().int().positive(),
});
export type RateLimit = z.infer<typeof rateLimitSchema>;

/** A vendor key's stable, non-secret name: what metrics and logs show for it. */
export const vendorKeyId = z
  .string()
  .regex(/^[A-Za-z0-9_.:@-]{1,64}$/, '1 to 64 letters, digits, "_", ".", ":", "@" or "-"');
/** Share of the rotation (smooth weighted round robin); 0 = standby, used only when no weighted key is healthy. */
export const weight = z.number().int().nonnegative();

export const vendorKeySchema = z.strictObject({
  /** Default: `k-` and the first 12 hex digits of the key's sha256. */
  id: vendorKeyId.optional(),
  key: z.string().min(1),
  /** Default 1 (a fallback's keys: the fallback's weight). */
  weight: weight.optional(),
});

/** Another origin serving the same API (a second region, a compatible host), tried when the primary keys fail. */
export const vendorFallbackSchema = z.strictObject({
  baseUrl: url,
  /** Keys for this origin; neither `apiKeys` nor `keys` = the vendor's own keys. */
  apiKeys: z.array(z.string().min(1)).optional(),
  keys: z.array(vendorKeySchema).optional(),
  /** Weight of each of its keys (a key's own weight wins); default 0: standby. */
  weight: weight.optional(),
});

/** An API reached with keys at a base URL: a first-party vendor, a server speaking its API, Azure OpenAI. */
export const keyedFields = {
  baseUrl: url,
  apiKeys: z.array(z.string().min(1)),
  /** More keys for `baseUrl`, with ids and weights (beside `apiKeys`, which weigh 1 each). */
  keys: z.array(vendorKeySchema).optional(),
  fallbacks: z.array(vendorFallbackSchema).optional(),
};

/** The refinement of keyed fields: metrics and logs tell keys apart by id. */
export const distinctKeyIds: [
  (vendor: { keys?: { id?: string }[]; fallbacks?: { keys?: { id?: string }[] }[] }) => boolean,
  { message: string; path: string[] },
] = [
  (vendor: { keys?: { id?: string }[]; fallbacks?: { keys?: { id?: string }[] }[] }) => {
    const ids = [...(vendor.keys ?? []), ...(vendor.fallbacks ?? []).flatMap((f) => f.keys ?? [])]
      .map((k) => k.id)
      .filter((id) => id !== undefined);
    return new Set(ids).size === ids.length;
  },
  { message: 'vendor key ids must differ (metrics and logs tell keys apart by id)', path: ['keys'] },
];

/** An upstream's id: what routes, metrics and logs name it by. */
export const upstreamId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/,
    '1 to 63 letters, digits, "_", "." or "-", starting with a letter or digit',
  );
