import type { RequestLogRow, Surface } from './types';

/*
 * A request row as one line: the JSON array of its values in the insert's column order. A call's row is written once,
 * when the call ends, straight into the batch it will go in (`RowLines.pushRow`, the one encoder of a line); the
 * batch goes to PostgreSQL as `[line,line,...]`, unpacked by jsonb_array_elements. PostgreSQL's text cannot hold NUL,
 * so a `\u0000` escape is dropped, for both stores alike.
 */

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

const len = (s: string | null): number => (s === null ? 4 : s.length);
/** 10^0 to 10^8: the digits of a number below 10^8. */
const POWERS = Array.from({ length: 9 }, (_, i) => 10 ** i);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const ZERO = 0x30;
/** `null,` */
const NULL = Uint8Array.from(Buffer.from('null,'));
const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
/** jsonb's binary format: a version byte (1), then the JSON text. */
const JSONB_VERSION = 1;

/**
 * A run of adjacent columns whose strings repeat from row to row (up to six), with their last strings and those
 * strings' bytes (a copy: the batch's bytes are reused). The columns past the run's size stay null.
 */
class Run {
  private readonly texts: (string | null)[] = [null, null, null, null, null, null];
  bytes: Uint8Array | undefined;

  constructor(readonly size: number) {}

  holds(
    a: string | null,
    b: string | null,
    c: string | null,
    d: string | null,
    e: string | null,
    f: string | null,
  ): boolean {
    const t = this.texts;
    return (
      this.bytes !== undefined &&
      a === t[0] &&
      b === t[1] &&
      c === t[2] &&
      d === t[3] &&
      e === t[4] &&
      f === t[5]
    );
  }

  keep(texts: (string | null)[], bytes: Uint8Array): void {
    texts.forEach((text, i) => (this.texts[i] = text));
    this.bytes = new Uint8Array(bytes);
  }
}

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
  /**
   * Runs of columns whose strings repeat together, each with its last strings and their bytes (`"text",` each): the
   * caller (account, key), the call (surface, method, route, model, upstream, upstream model), the error type, the
   * client (user agent, address).
   */
  private readonly caller = new Run(2);
  private readonly call = new Run(6);
  private readonly error = new Run(1);
  private readonly client = new Run(2);

  constructor(capacity = 64 << 10) {
    this.bytes = Buffer.allocUnsafeSlow(Math.max(capacity, 64));
    this.bytes[0] = JSONB_VERSION;
    this.bytes[1] = OPEN;
  }

  /** Rows written as one batch (a spill file's, or a batch handed over whole). */
  static ofRows(rows: readonly RequestLogRow[]): RowLines {
    const lines = new RowLines(rows.length * 512);
    for (const r of rows) lines.pushRow(r);
    return lines;
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

  /**
   * A row written straight into the batch's bytes (its line, without the line string in between; a property test
   * holds it to what JSON.stringify writes of the values). Most of a row's strings repeat from call to call, in runs of
   * adjacent columns (the caller, the call's route and model, the client): each run keeps its last strings' bytes,
   * copied again in one piece while they are the same. A new short ASCII string (an id, an address) is copied a UTF-16
   * unit a byte; one that needs more (an escape, a non-ASCII character) goes through JSON.stringify.
   */
  pushRow(r: RequestLogRow): this {
    const text =
      r.requestId.length +
      len(r.accountId) +
      len(r.keyId) +
      r.surface.length +
      r.method.length +
      r.route.length +
      len(r.model) +
      len(r.upstream) +
      len(r.upstreamModel) +
      len(r.errorType) +
      len(r.userAgent) +
      len(r.clientIp) +
      len(r.taskId) +
      len(r.batchId);
    // An escaped UTF-16 unit is at most 6 bytes (`\ud800`); 14 strings' quotes and commas, 12 numbers of at most 25.
    const room = text * 6 + 14 * 3 + 12 * 26 + 4;
    if (this.used + room > this.bytes.length) this.grow(room);
    const b = this.bytes;
    if (this.ends.length) b[this.used++] = COMMA;
    b[this.used++] = OPEN;
    this.num(r.time);
    this.str(r.requestId);
    this.run(this.caller, r.accountId, r.keyId);
    this.run(this.call, r.surface, r.method, r.route, r.model, r.upstream, r.upstreamModel);
    this.num(r.status);
    this.run(this.error, r.errorType);
    this.num(r.inputTokens);
    this.num(r.outputTokens);
    this.num(r.cachedTokens);
    this.num(r.cacheWriteTokens);
    this.num(r.reasoningTokens);
    this.num(r.costMicros);
    this.ms(r.latencyMs);
    this.ms(r.ttfbMs);
    this.run(this.client, r.userAgent, r.clientIp);
    this.str(r.taskId);
    this.str(r.batchId);
    this.num(r.requestBytes);
    this.num(r.responseBytes);
    b[this.used - 1] = CLOSE; // the last value's comma
    this.ends.push(this.used);
    this.times.push(r.time);
    return this;
  }

  /**
   * A run of columns: its kept bytes again while its strings are the same; else its strings written, and kept (the
   * array only then: a run changes seldom).
   */
  private run(
    run: Run,
    a: string | null,
    b: string | null = null,
    c: string | null = null,
    d: string | null = null,
    e: string | null = null,
    f: string | null = null,
  ): void {
    if (run.holds(a, b, c, d, e, f)) {
      this.bytes.set(run.bytes!, this.used);
      this.used += run.bytes!.length;
      return;
    }
    const start = this.used;
    const texts = [a, b, c, d, e, f].slice(0, run.size);
    for (const text of texts) this.str(text);
    run.keep(texts, this.bytes.subarray(start, this.used));
  }

  /** ASCII text (a number as JSON prints it, or null), then a comma. */
  private ascii(text: string): void {
    const b = this.bytes;
    let p = this.used;
    for (let i = 0; i < text.length; i++) b[p++] = text.charCodeAt(i);
    b[p++] = COMMA;
    this.used = p;
  }

  private null(): void {
    const b = this.bytes;
    const p = this.used;
    for (let i = 0; i < NULL.length; i++) b[p + i] = NULL[i];
    this.used = p + NULL.length;
  }

  private str(s: string | null): void {
    if (s === null) return this.null();
    const b = this.bytes;
    let p = this.used;
    b[p++] = QUOTE;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === QUOTE || c === BACKSLASH) {
        const json = JSON.stringify(s);
        this.used += b.write(json.includes('\\u0000') ? withoutNul(json) : json, this.used);
        b[this.used++] = COMMA;
        return;
      }
      b[p++] = c;
    }
    b[p++] = QUOTE;
    b[p++] = COMMA;
    this.used = p;
  }

  private num(n: number | null): void {
    if (n === null) return this.null();
    if (n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n)) this.digits(n);
    else return this.ascii(Number.isFinite(n) ? String(n) : 'null');
    this.bytes[this.used++] = COMMA;
  }

  /**
   * A duration in ms, which the row holds to the µs (./request-log.ts): whole ms, then up to three decimals without
   * trailing zeros, printed from whole numbers (V8's double printer costs about 150 ns a value). Reads back as the
   * same number; anything else is printed as JSON would.
   */
  private ms(n: number | null): void {
    if (n === null) return this.null();
    if (!Number.isFinite(n)) return this.ascii('null');
    const micros = Math.round(n * 1000);
    if (micros < 0 || micros >= 0x40000000 || micros / 1000 !== n) return this.ascii(String(n));
    const whole = Math.floor(micros / 1000);
    const frac = micros - whole * 1000;
    this.digits(whole);
    const b = this.bytes;
    if (frac !== 0) {
      const d1 = Math.floor(frac / 100);
      const d2 = Math.floor(frac / 10) % 10;
      const d3 = frac % 10;
      b[this.used++] = DOT;
      b[this.used++] = ZERO + d1;
      if (d2 !== 0 || d3 !== 0) b[this.used++] = ZERO + d2;
      if (d3 !== 0) b[this.used++] = ZERO + d3;
    }
    b[this.used++] = COMMA;
  }

  /**
   * A whole number from 0 to 2^53, in decimal: below 10^8 in small-integer arithmetic, above as its two halves (a
   * double's `%` is a call to fmod, some 20 ns a digit: a time's 13 digits were a quarter of a row).
   */
  private digits(n: number): void {
    if (n < 1e8) return this.small(n, 1);
    let high = Math.floor(n / 1e8);
    let low = n - high * 1e8; // exact: both below 2^53
    if (low < 0) {
      high -= 1; // the division rounded up
      low += 1e8;
    }
    this.small(high, 1);
    this.small(low, 8);
  }

  /** A whole number below 10^8, in at least `width` digits (zeros in front). */
  private small(n: number, width: number): void {
    let count = 1;
    while (n >= POWERS[count]) count++;
    if (count < width) count = width;
    const b = this.bytes;
    const start = this.used;
    let p = start + count;
    this.used = p;
    for (let v = n | 0; p > start; ) {
      const q = (v / 10) | 0;
      b[--p] = ZERO + v - q * 10;
      v = q;
    }
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
