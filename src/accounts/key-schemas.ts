import { z } from 'zod';
import { rateLimitSchema } from '../config';

/** An ISO 8601 date-time with its offset (`2027-01-01T00:00:00Z`), as ms since the epoch. */
export const isoTime = z
  .string()
  .max(64)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/, {
    error: 'must be an ISO 8601 date-time with a time zone, e.g. 2027-01-01T00:00:00Z',
  })
  .transform((text, ctx) => {
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be a real date-time' });
      return z.NEVER;
    }
    return ms;
  });

const METADATA_BYTES = 4096;
/** Free labels: a flat object of short strings, numbers, booleans or lists of strings, 4 KB at most. */
const metadata = z
  .record(
    z.string().min(1).max(100),
    z.union([z.string().max(1000), z.number().finite(), z.boolean(), z.array(z.string().max(200)).max(100)]),
    { error: 'must be an object of strings, numbers, booleans or lists of strings' },
  )
  .refine((m) => Object.keys(m).length <= 50, { error: 'must have at most 50 entries' })
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_BYTES, {
    error: `must be at most ${METADATA_BYTES} bytes as JSON`,
  });

/** POST /admin/v1/accounts/{id}/keys. */
export const createKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  models: z.array(z.string().min(1).max(200)).max(1000).optional(),
  rateLimit: rateLimitSchema.optional(),
  expiresAt: isoTime.optional(),
  metadata: metadata.optional(),
});

/** POST /api/v1/keys: an account's own keys; a key's rate limit is the operator's to set, not the account's. */
export const selfServiceKeyBody = createKeyBody.omit({ rateLimit: true });

export const rotateKeyBody = z.strictObject({
  /** How long the old key keeps working (0 = refused at once); at most 30 days. */
  graceSeconds: z
    .number()
    .int()
    .nonnegative()
    .max(30 * 86_400),
  expiresAt: isoTime.optional(),
});
