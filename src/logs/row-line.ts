import type { RequestLogRow, Surface } from './types';

/**
 * A request row as one line: the JSON array of its values in the insert's column order. A call's row is encoded
 * once, when the call ends; the line is what the in-process ring keeps (bytes outside the JS heap) and what a batch
 * sends to PostgreSQL (`[line,line,...]`, unpacked by jsonb_array_elements). PostgreSQL's text cannot hold NUL, so
 * a `\u0000` escape is dropped here, for both stores alike.
 */
export function rowLine(r: RequestLogRow): string {
  const line = `[${num(r.time)},${str(r.requestId)},${str(r.accountId)},${str(r.keyId)},${str(r.surface)},${str(r.method)},${str(r.route)},${str(r.model)},${str(r.upstream)},${str(r.upstreamModel)},${num(r.status)},${str(r.errorType)},${num(r.inputTokens)},${num(r.outputTokens)},${num(r.cachedTokens)},${num(r.cacheWriteTokens)},${num(r.reasoningTokens)},${num(r.costMicros)},${num(r.latencyMs)},${num(r.ttfbMs)},${str(r.userAgent)},${str(r.clientIp)},${str(r.taskId)},${str(r.batchId)},${num(r.requestBytes)},${num(r.responseBytes)}]`;
  return line.includes('\\u0000') ? withoutNul(line) : line;
}

/** What JSON.stringify would make of each value, without its walk over an array: the line is built once per call. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const str = (s: string | null): string =>
  s === null ? 'null' : NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
const num = (n: number | null): string => (n !== null && Number.isFinite(n) ? String(n) : 'null');

/** Drops every `\u0000` escape of a JSON text (one whose backslash is not itself escaped). */
export function withoutNul(json: string): string {
  return json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1');
}

/** The row a line holds. */
export function rowOfLine(line: string): RequestLogRow {
  const v = JSON.parse(line) as unknown[];
  return {
    time: v[0] as number,
    requestId: v[1] as string,
    accountId: v[2] as string | null,
    keyId: v[3] as string | null,
    surface: v[4] as Surface,
    method: v[5] as string,
    route: v[6] as string,
    model: v[7] as string | null,
    upstream: v[8] as string | null,
    upstreamModel: v[9] as string | null,
    status: v[10] as number,
    errorType: v[11] as string | null,
    inputTokens: v[12] as number | null,
    outputTokens: v[13] as number | null,
    cachedTokens: v[14] as number | null,
    cacheWriteTokens: v[15] as number | null,
    reasoningTokens: v[16] as number | null,
    costMicros: v[17] as number,
    latencyMs: v[18] as number,
    ttfbMs: v[19] as number | null,
    userAgent: v[20] as string | null,
    clientIp: v[21] as string | null,
    taskId: v[22] as string | null,
    batchId: v[23] as string | null,
    requestBytes: v[24] as number | null,
    responseBytes: v[25] as number | null,
  };
}
