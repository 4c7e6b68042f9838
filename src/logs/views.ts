import type { Response } from 'express';
import { microsToUsd } from '../money';
import type { PageOf, Position, StoredAuditRow, StoredRequestLog } from './types';

/** A request-log row as the API shows it: `time` in ISO 8601 (as `from` and `to` are given), money in USD. */
export function logView(row: StoredRequestLog) {
  return {
    logId: row.logId,
    requestId: row.requestId,
    time: new Date(row.time).toISOString(),
    accountId: row.accountId,
    keyId: row.keyId,
    surface: row.surface,
    method: row.method,
    route: row.route,
    model: row.model,
    upstream: row.upstream,
    upstreamModel: row.upstreamModel,
    status: row.status,
    errorType: row.errorType,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    cachedTokens: row.cachedTokens,
    cacheWriteTokens: row.cacheWriteTokens,
    reasoningTokens: row.reasoningTokens,
    costUsd: microsToUsd(row.costMicros),
    latencyMs: row.latencyMs,
    ttfbMs: row.ttfbMs,
    userAgent: row.userAgent,
    clientIp: row.clientIp,
    taskId: row.taskId,
    batchId: row.batchId,
    requestBytes: row.requestBytes,
    responseBytes: row.responseBytes,
  };
}

export function auditView(row: StoredAuditRow) {
  return {
    auditId: row.auditId,
    time: new Date(row.time).toISOString(),
    actor: row.actor,
    action: row.action,
    target: row.target,
    accountId: row.accountId,
    before: row.before,
    after: row.after,
    requestId: row.requestId,
    clientIp: row.clientIp,
  };
}

const LOG_COLUMNS = Object.keys(
  logView({ logId: '', time: 0, costMicros: 0 } as StoredRequestLog),
) as (keyof ReturnType<typeof logView>)[];
const AUDIT_COLUMNS = Object.keys(auditView({ auditId: '', time: 0 } as StoredAuditRow)) as (keyof ReturnType<
  typeof auditView
>)[];

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; text a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@` first: a user agent is the client's to choose) is prefixed with `'`.
 */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows read a page at a time for an export. */
const EXPORT_PAGE = 1000;

/**
 * Streams every row a query matches as CSV or JSON lines, a page at a time, waiting for the client to take each
 * page before reading the next (never the whole set in memory); stops when the client leaves.
 */
export async function streamExport<T>(
  res: Response,
  format: 'csv' | 'jsonl',
  kind: 'logs' | 'audit',
  read: (limit: number, after?: Position) => Promise<PageOf<T>>,
  view: (row: T) => Record<string, unknown>,
  after?: Position,
): Promise<void> {
  const columns: string[] = kind === 'logs' ? LOG_COLUMNS : AUDIT_COLUMNS;
  res.status(200);
  res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="genway-${kind}.${format === 'csv' ? 'csv' : 'jsonl'}"`,
  );
  res.setHeader('Cache-Control', 'no-store');
  let gone = false;
  res.once('close', () => (gone = true));
  const send = async (text: string) => {
    if (res.write(text) || gone) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  };
  if (format === 'csv') await send(`${columns.join(',')}\r\n`);
  let position = after;
  for (;;) {
    const page = await read(EXPORT_PAGE, position);
    let text = '';
    for (const row of page.rows) {
      const shown = view(row);
      text +=
        format === 'csv'
          ? `${columns.map((c) => csvField(shown[c])).join(',')}\r\n`
          : `${JSON.stringify(shown)}\n`;
    }
    if (text) await send(text);
    if (gone || page.next === null) break;
    position = page.next;
  }
  res.end();
}
