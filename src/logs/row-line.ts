import type { RequestLogRow, Surface } from './types';

/**
 * A request row as one line: the JSON array of its values in the insert's column order. A call's row is encoded
 * once, when the call ends; the line is what the in-process ring keeps (bytes outside the JS heap) and what a batch
 * sends to PostgreSQL (`[line,line,...]`, unpacked by jsonb_array_elements). PostgreSQL's text cannot hold NUL, so
 * a `\u0000` escape is dropped here, for both stores alike.
 */
export function rowLine(r: RequestLogRow): string {
  const line = `[${num(r.time)},${str(r.requestId)},${str(r.accountId)},${str(r.keyId)},${str(r.surface)},${str(r.method)},${str(r.route)},${str(r.model)},${str(r.upstream)},${str(r.upstreamModel)},${num(r.status)},${str(r.errorType)},${num(r.inputTokens)},${num(r.outputTokens)},${num(r.cachedTokens)},${num(r.cacheWriteTokens)},${num(r.reasoningTokens)},${num(r.costMicros)},${msText(r.latencyMs)},${msText(r.ttfbMs)},${str(r.userAgent)},${str(r.clientIp)},${str(r.taskId)},${str(r.batchId)},${num(r.requestBytes)},${num(r.responseBytes)}]`;
  return line.includes('\\u0000') ? withoutNul(line) : line;
}

/** What JSON.stringify would make of each value, without its walk over an array: the line is built once per call. */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const str = (s: string | null): string =>
  s === null ? 'null' : NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
const num = (n: number | null): string =>
  n === null || !Number.isFinite(n) ? 'null' : Number.isInteger(n) ? int(n) : String(n);

/**
 * A whole number's digits. V8 prints a small integer from its number-string cache; one past 2^30 (a time in epoch ms)
 * goes through its double printer at about 150 ns, so it is printed as two small halves instead.
 */
function int(n: number): string {
  if (n >= 0 && n < 0x40000000) return String(n);
  if (n < 0 || n > Number.MAX_SAFE_INTEGER) return String(n);
  const high = Math.floor(n / 1e6);
  const low = String(n - high * 1e6);
  return `${high}${'000000'.slice(low.length)}${low}`;
}

/**
 * A duration in ms, which the row holds to the µs (./request-log.ts), printed from whole numbers: the double printer
 * costs about 150 ns a value. Reads back as the same number.
 */
export function msText(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return 'null';
  const micros = Math.round(n * 1000);
  if (micros < 0 || micros >= 0x40000000 || micros / 1000 !== n) return String(n);
  const whole = Math.floor(micros / 1000);
  const frac = micros - whole * 1000;
  if (frac === 0) return String(whole);
  if (frac % 100 === 0) return `${whole}.${frac / 100}`;
  if (frac % 10 === 0) return `${whole}.${frac < 100 ? '0' : ''}${frac / 10}`;
  return `${whole}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

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

const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
/** jsonb's binary format: a version byte (1), then the JSON text. */
const JSONB_VERSION = 1;

/**
 * Request rows waiting for one batch, as their lines' UTF-8 bytes in one buffer: `[line,line,...]`, preceded by
 * jsonb's version byte so PostgreSQL takes it as a binary parameter as is (no text copy of the batch, no encoding).
 * A row waits here up to `logs.flushMs`; held outside the JS heap, it costs the garbage collector nothing, where a
 * string waiting that long is promoted, then marked and swept. Each row's end and time are kept beside it.
 */
export class RowLines {
  private bytes: Buffer;
  /** Bytes used: the version byte, `[`, and the lines with their commas. */
  private used = 2;
  private ends: number[] = [];
  times: number[] = [];

  constructor(capacity = 64 << 10) {
    this.bytes = Buffer.allocUnsafeSlow(Math.max(capacity, 64));
    this.bytes[0] = JSONB_VERSION;
    this.bytes[1] = OPEN;
  }

  static of(lines: readonly string[], times: readonly number[]): RowLines {
    const rows = new RowLines(lines.reduce((n, l) => n + l.length + 1, 0) * 3 + 3);
    lines.forEach((line, i) => rows.push(line, times[i]));
    return rows;
  }

  /** Empty again, its buffer kept (a batch sent; the writer fills it anew). */
  reset(): this {
    this.used = 2;
    this.ends = [];
    this.times = [];
    return this;
  }

  get count(): number {
    return this.ends.length;
  }

  push(line: string, time: number): void {
    // A UTF-16 unit is at most 3 bytes of UTF-8; room for the comma, and the `]` of json().
    const room = line.length * 3 + 2;
    if (this.used + room > this.bytes.length) this.grow(room);
    if (this.ends.length) this.bytes[this.used++] = COMMA;
    this.used += this.bytes.write(line, this.used);
    this.ends.push(this.used);
    this.times.push(time);
  }

  private grow(room: number): void {
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.used + room));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  /** The batch as jsonb's binary parameter: its version byte, then `[line,...]`. */
  jsonb(): Buffer {
    this.bytes[this.used] = CLOSE;
    return this.bytes.subarray(0, this.used + 1);
  }

  /** The batch as JSON text: `[line,...]`. */
  json(): string {
    return this.jsonb().toString('utf8', 1);
  }

  line(i: number): string {
    return this.bytes.toString('utf8', i === 0 ? 2 : this.ends[i - 1] + 1, this.ends[i]);
  }

  lines(): string[] {
    return this.ends.map((_, i) => this.line(i));
  }

  /** The rows `keep` says, in order (a batch some of whose rows expired). */
  filter(keep: readonly boolean[]): RowLines {
    const lines = this.lines();
    return RowLines.of(
      lines.filter((_, i) => keep[i]),
      this.times.filter((_, i) => keep[i]),
    );
  }
}
