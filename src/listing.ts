import { z } from 'zod';
import { ApiError } from './errors';
import { parseOrThrow } from './http/validate';

/**
 * Newest-first lists of an account's records (tasks, batches, webhook deliveries) with an opaque cursor.
 *
 * Each store keeps, per account, an ordered index of members `<time, 15 digits>:<id>`: lexicographic order is time
 * order, ties broken by id. A page runs down the index from just below its cursor, so records created while a client
 * pages through land above the cursor and never shift or repeat what it has still to read.
 */
export const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;
/** A page reads at most this many index entries: a filter that matches rarely answers a short page and a cursor. */
export const SCAN_LIMIT = 2000;

export function indexMember(time: number, id: string): string {
  return `${String(time).padStart(15, '0')}:${id}`;
}

/** Where in the index a page reads: members below `below` (exclusive) and at or above `from` (inclusive). */
export interface IndexRange {
  below?: string;
  from?: string;
}

export interface PageRequest {
  /** Exclusive bounds on the record's time, in epoch ms. */
  after?: number;
  before?: number;
  /** The member the previous page ended on. */
  cursor?: string;
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** Hand back as `cursor` for the next page; null at the end. */
  next: string | null;
}

/** The index range a page reads: below the cursor and the `before` bound, at or above the `after` bound. */
export function rangeOf(page: PageRequest): IndexRange {
  const bounds = [page.cursor, page.before === undefined ? undefined : String(page.before).padStart(15, '0')];
  const below = bounds.filter((b): b is string => b !== undefined).sort()[0];
  return { below, from: page.after === undefined ? undefined : indexMember(page.after + 1, '') };
}

/**
 * Reads a page through `chunk` (up to `n` members below `below`, newest first, each with its record or null when
 * the record is gone): keeps the records that `match` until `limit` of them, reading at most SCAN_LIMIT members.
 */
export async function collectPage<T>(
  page: PageRequest,
  chunk: (range: IndexRange, n: number) => Promise<{ member: string; record: T | null }[]>,
  match: (record: T) => boolean,
): Promise<Page<T>> {
  const items: T[] = [];
  let range = rangeOf(page);
  let scanned = 0;
  while (scanned < SCAN_LIMIT) {
    const n = Math.min(Math.max(page.limit * 2, 50), SCAN_LIMIT - scanned);
    const got = await chunk(range, n);
    for (const { member, record } of got) {
      scanned++;
      if (record === null || !match(record)) continue;
      items.push(record);
      if (items.length === page.limit) return { items, next: member };
    }
    if (got.length < n) return { items, next: null };
    range = { ...range, below: got[got.length - 1].member };
  }
  return { items, next: range.below ?? null };
}

export function encodeCursor(member: string | null): string | null {
  return member === null ? null : Buffer.from(member, 'utf8').toString('base64url');
}

function decodeCursor(text: string): string {
  const member = Buffer.from(text, 'base64url').toString('utf8');
  if (!/^\d{15}:[A-Za-z0-9_-]+$/.test(member))
    throw new ApiError('invalid_request', 'query.cursor: not a cursor this list returned');
  return member;
}

/** Epoch ms, or an ISO 8601 date-time. */
const instant = z.union(
  [
    z
      .string()
      .regex(/^\d{1,15}$/)
      .transform(Number),
    z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
  ],
  { error: 'must be epoch milliseconds or an ISO 8601 date-time' },
);

const pageQuery = z.object({
  createdAfter: instant.optional(),
  createdBefore: instant.optional(),
  limit: z
    .string()
    .regex(/^\d+$/, { error: `must be an integer from 1 to ${MAX_LIMIT}` })
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_LIMIT, { error: `must be an integer from 1 to ${MAX_LIMIT}` })
    .default(DEFAULT_LIMIT),
  cursor: z.string().optional(),
});

/**
 * The query of a list endpoint: the paging fields every list shares plus this list's `filters` (each a string, or
 * one of an enum), each given at most once; any other field is a 400 naming it.
 */
export function parseListQuery<F extends z.ZodRawShape>(
  query: unknown,
  filters: F,
): PageRequest & z.infer<z.ZodObject<F>> {
  const single = Object.entries((query ?? {}) as Record<string, unknown>);
  for (const [name, value] of single)
    if (typeof value !== 'string')
      throw new ApiError('invalid_request', `query.${name}: must be given once, as a string`);
  const parsed = parseOrThrow(pageQuery.extend(filters).strict(), query ?? {}, 'query') as z.infer<
    typeof pageQuery
  > &
    z.infer<z.ZodObject<F>>;
  const { createdAfter, createdBefore, cursor, limit, ...rest } = parsed;
  return {
    ...(rest as z.infer<z.ZodObject<F>>),
    after: createdAfter,
    before: createdBefore,
    cursor: cursor === undefined ? undefined : decodeCursor(cursor),
    limit,
  };
}
