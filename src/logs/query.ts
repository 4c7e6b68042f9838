import { z } from 'zod';
import { ApiError } from '../errors';
import { parseOrThrow } from '../http/validate';
import { decodeLogCursor } from './position';
import type { AuditFilter, Position, RequestLogFilter } from './types';

export const MAX_LOG_LIMIT = 1000;
const DEFAULT_LOG_LIMIT = 50;
export const LOG_FORMATS = ['json', 'csv', 'jsonl'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** An ISO 8601 date-time with its zone, or a UTC date (its midnight). */
const isoTime = z.union(
  [
    z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
    z.iso.date().transform((s) => Date.parse(`${s}T00:00:00Z`)),
  ],
  { error: 'must be an ISO 8601 date-time with a zone (2026-11-14T14:02:00Z) or a date (2026-11-14)' },
);

const shortText = (max: number) =>
  z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** `200`, or a class such as `5xx`. */
const status = z
  .string()
  .regex(/^([1-5]\d\d|[1-5]xx)$/, { error: 'must be a status (100 to 599) or a class (1xx to 5xx)' })
  .transform((s): [number, number] => {
    if (s.endsWith('xx')) {
      const base = Number(s[0]) * 100;
      return [base, base + 99];
    }
    return [Number(s), Number(s)];
  });

const paging = {
  from: isoTime.optional(),
  to: isoTime.optional(),
  limit: z
    .string()
    .regex(/^\d+$/, { error: `must be an integer from 1 to ${MAX_LOG_LIMIT}` })
    .transform(Number)
    .refine((n) => n >= 1 && n <= MAX_LOG_LIMIT, { error: `must be an integer from 1 to ${MAX_LOG_LIMIT}` })
    .default(DEFAULT_LOG_LIMIT),
  cursor: z.string().max(200).optional(),
  format: z.enum(LOG_FORMATS, { error: 'must be one of json, csv, jsonl' }).default('json'),
};

const logFilters = {
  ...paging,
  model: shortText(128).optional(),
  keyId: shortText(200).optional(),
  status: status.optional(),
  upstream: shortText(64).optional(),
  surface: z.enum(['gateway', 'tasks'], { error: 'must be one of gateway, tasks' }).optional(),
  requestId: shortText(200).optional(),
  taskId: shortText(200).optional(),
};

const auditFilters = {
  ...paging,
  actor: shortText(200).optional(),
  action: shortText(100).optional(),
  target: shortText(300).optional(),
};

export interface Parsed<F> {
  filter: F;
  limit: number;
  after?: Position;
  format: LogFormat;
}

/** Every parameter given once, as text; anything else is a 400 naming it. */
function single(query: unknown): Record<string, string> {
  const entries = Object.entries((query ?? {}) as Record<string, unknown>);
  for (const [name, value] of entries)
    if (typeof value !== 'string')
      throw new ApiError('invalid_request', `query.${name}: must be given once, as a string`);
  return Object.fromEntries(entries) as Record<string, string>;
}

function checkRange(from: number | undefined, to: number | undefined): void {
  if (from !== undefined && to !== undefined && from >= to)
    throw new ApiError('invalid_request', 'query.from: must be before query.to');
}

/** Filters, paging and format from a list's query: each parameter once, checked by `shape` (a 400 names it). */
function parseListQuery<F>(shape: z.ZodRawShape, query: unknown): Parsed<F> {
  const parsed = parseOrThrow(z.strictObject(shape), single(query), 'query') as {
    from?: number;
    to?: number;
    limit: number;
    cursor?: string;
    format: LogFormat;
  };
  const { from, to, limit, cursor, format, ...rest } = parsed;
  checkRange(from, to);
  const after = cursor === undefined ? undefined : decodeLogCursor(cursor);
  if (after === null) throw new ApiError('invalid_request', 'query.cursor: not a cursor this list returned');
  return { filter: { from, to, ...rest } as F, limit, after, format };
}

/**
 * GET /api/v1/logs and /admin/v1/logs: `from`, `to` (ISO times; `from` inclusive, `to` exclusive), `model`, `keyId`,
 * `status`, `upstream`, `surface`, `requestId`, `taskId`, `limit`, `cursor`, `format`; the admin's also `accountId`.
 */
export function parseLogQuery(query: unknown, admin: boolean): Parsed<RequestLogFilter> {
  return parseListQuery(admin ? { ...logFilters, accountId: shortText(200).optional() } : logFilters, query);
}

/** GET /admin/v1/audit: `from`, `to`, `actor`, `action`, `target`, `accountId`, `limit`, `cursor`, `format`. */
export function parseAuditQuery(query: unknown): Parsed<AuditFilter> {
  return parseListQuery({ ...auditFilters, accountId: shortText(200).optional() }, query);
}
