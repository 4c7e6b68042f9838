import type { RequestLogRow } from './types';

/*
 * Request rows as PostgreSQL's COPY takes them in its binary format: each row a tuple of its 26 fields, each field its
 * length (-1: null) and its value's bytes in the column's own binary form (timestamptz as µs since 2000, integers and
 * floats big-endian, text as UTF-8). The server then parses nothing: no text to read into numbers and times, no jsonb
 * to take apart. It costs the database 0.78x to 0.80x the CPU per row of the multi-row insert from a jsonb array it
 * replaced (bench:logs:db; 0.71x over bench:logs:gateway's closed loop: docs/performance.md). A call's row is written once, when it is taken from the call, straight
 * into the batch it goes in.
 *
 * A value a column cannot hold (a token count past int4, a NaN latency) is written as null, or as 0 in a column that
 * is NOT NULL: one bad value must not have the database refuse the batch, and with it up to `logs.batchRows` rows.
 * PostgreSQL's text cannot hold NUL, so a string's NUL characters are dropped.
 */

/**
 * The columns a tuple's fields fill, in order, each with its binary form and the row's field it holds (the table's
 * `id` takes its default). `time` is an int8 of µs since 2000, as timestamptz is sent.
 */
const COLUMNS = [
  ['time', 'int8', 'time'],
  ['request_id', 'text', 'requestId'],
  ['account_id', 'text', 'accountId'],
  ['key_id', 'text', 'keyId'],
  ['surface', 'text', 'surface'],
  ['method', 'text', 'method'],
  ['route', 'text', 'route'],
  ['model', 'text', 'model'],
  ['upstream', 'text', 'upstream'],
  ['upstream_model', 'text', 'upstreamModel'],
  ['status', 'int2', 'status'],
  ['error_type', 'text', 'errorType'],
  ['input_tokens', 'int4', 'inputTokens'],
  ['output_tokens', 'int4', 'outputTokens'],
  ['cached_tokens', 'int4', 'cachedTokens'],
  ['cache_write_tokens', 'int4', 'cacheWriteTokens'],
  ['reasoning_tokens', 'int4', 'reasoningTokens'],
  ['cost_micros', 'int8', 'costMicros'],
  ['latency_ms', 'float4', 'latencyMs'],
  ['ttfb_ms', 'float4', 'ttfbMs'],
  ['user_agent', 'text', 'userAgent'],
  ['client_ip', 'text', 'clientIp'],
  ['task_id', 'text', 'taskId'],
  ['batch_id', 'text', 'batchId'],
  ['request_bytes', 'int8', 'requestBytes'],
  ['response_bytes', 'int8', 'responseBytes'],
] as const satisfies readonly (readonly [string, string, keyof RequestLogRow])[];

/** The COPY's column list. */
export const COPY_COLUMNS = COLUMNS.map(([name]) => name).join(', ');
const KINDS = COLUMNS.map(([, kind]) => kind);
const ROW_FIELDS = COLUMNS.map(([, , field]) => field);
/** Every field of a row has its column: a field added to RequestLogRow without one does not compile. */
const EVERY_FIELD: Exclude<keyof RequestLogRow, (typeof ROW_FIELDS)[number]> extends never ? true : never =
  true;
void EVERY_FIELD;
const FIELDS = COLUMNS.length;
/** The signature, the flags (none) and the header extension's length (none). */
const HEADER = Uint8Array.from([
  0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
]);
/** The end of the data: a tuple of -1 fields. */
const TRAILER = Uint8Array.from([0xff, 0xff]);
/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in ms since 1970's. */
const EPOCH_2000_MS = 946_684_800_000;
const TWO_32 = 2 ** 32;
const INT4_MIN = -(2 ** 31);
const INT4_MAX = 2 ** 31 - 1;

/**
 * A run of adjacent text columns whose strings repeat from row to row (up to six), with their last strings and those
 * strings' encoded fields (a copy: the batch's bytes are reused). The columns past the run's size stay null.
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
 * Request rows waiting for one batch, as their tuples in one buffer after COPY's header, ready to go as the COPY's data
 * (no copy of the batch, no encoding). A row waits here up to `logs.flushMs`; held outside the JS heap, it costs the
 * garbage collector nothing, where objects waiting that long are promoted, then marked and swept. Each tuple's end and
 * the row's time are kept beside it.
 */
export class CopyRows {
  private bytes: Buffer;
  private used = HEADER.length;
  private ends: number[] = [];
  times: number[] = [];
  /**
   * Runs of columns whose strings repeat together, each with its last strings and their fields: the caller (account,
   * key), the call (surface, method, route, model, upstream, upstream model), the error type, the client (user agent,
   * address).
   */
  private readonly caller = new Run(2);
  private readonly call = new Run(6);
  private readonly error = new Run(1);
  private readonly client = new Run(2);

  constructor(capacity = 64 << 10) {
    this.bytes = Buffer.allocUnsafeSlow(Math.max(capacity, 64));
    this.bytes.set(HEADER, 0);
  }

  /** Rows written as one batch (a spill file's of an earlier version, or a batch handed over whole). */
  static ofRows(rows: readonly RequestLogRow[]): CopyRows {
    const batch = new CopyRows(rows.length * 400);
    for (const r of rows) batch.pushRow(r);
    return batch;
  }

  /** Tuples as `tuples()` gave them (a spill file's): their ends and times read back. Throws on bytes that are not. */
  static ofTuples(tuples: Uint8Array): CopyRows {
    const batch = new CopyRows(HEADER.length + tuples.length + TRAILER.length);
    batch.bytes.set(tuples, batch.used);
    const end = batch.used + tuples.length;
    const view = batch.bytes;
    let p = batch.used;
    const cut = () => new Error('a request row tuple cut short');
    while (p < end) {
      if (p + 2 > end) throw cut();
      if (view.readInt16BE(p) !== FIELDS) throw new Error('not a request row tuple');
      p += 2;
      if (p + 12 > end) throw cut();
      const time = readTime(view, p);
      for (let f = 0; f < FIELDS; f++) {
        if (p + 4 > end) throw cut();
        p += 4 + Math.max(view.readInt32BE(p), 0);
      }
      if (p > end) throw cut();
      batch.ends.push(p);
      batch.times.push(time);
    }
    batch.used = end;
    return batch;
  }

  /** Empty again, its buffer kept (a batch sent; the writer fills it anew). */
  reset(): this {
    this.used = HEADER.length;
    this.ends = [];
    this.times = [];
    return this;
  }

  get count(): number {
    return this.ends.length;
  }

  /**
   * A row's tuple written straight into the batch's bytes. Most of a row's strings repeat from call to call, in runs
   * of adjacent columns (the caller, the call's route and model, the client): each run keeps its last strings' fields,
   * copied again in one piece while they are the same. A new ASCII string (an id, an address) is copied a UTF-16 unit
   * a byte; one that needs more (a NUL, a non-ASCII character) goes through Buffer's UTF-8 encoder.
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
    // A UTF-16 unit is at most 3 bytes of UTF-8; the field count, then 26 lengths and 12 numbers of at most 8 bytes.
    this.ensure(text * 3 + 2 + FIELDS * 4 + 12 * 8);
    const b = this.bytes;
    b[this.used++] = 0;
    b[this.used++] = FIELDS;
    this.int8(Math.round((r.time - EPOCH_2000_MS) * 1000), true);
    this.str(r.requestId);
    this.run(this.caller, r.accountId, r.keyId);
    this.run(this.call, r.surface, r.method, r.route, r.model, r.upstream, r.upstreamModel);
    this.int2(r.status);
    this.run(this.error, r.errorType);
    this.int4(r.inputTokens);
    this.int4(r.outputTokens);
    this.int4(r.cachedTokens);
    this.int4(r.cacheWriteTokens);
    this.int4(r.reasoningTokens);
    this.int8(r.costMicros, true);
    this.float4(r.latencyMs, true);
    this.float4(r.ttfbMs, false);
    this.run(this.client, r.userAgent, r.clientIp);
    this.str(r.taskId);
    this.str(r.batchId);
    this.int8(r.requestBytes, false);
    this.int8(r.responseBytes, false);
    this.ends.push(this.used);
    this.times.push(r.time);
    return this;
  }

  /**
   * A run of columns: its kept fields again while its strings are the same; else its strings written, and kept (the
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

  /** A big-endian 32-bit integer: a field's length (-1: null), or an int4 value or half of an int8. */
  private int32(n: number): void {
    const b = this.bytes;
    const p = this.used;
    b[p] = n >>> 24;
    b[p + 1] = (n >>> 16) & 0xff;
    b[p + 2] = (n >>> 8) & 0xff;
    b[p + 3] = n & 0xff;
    this.used = p + 4;
  }

  private str(s: string | null): void {
    if (s === null) return this.int32(-1);
    const b = this.bytes;
    const start = this.used + 4;
    let p = start;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 0 || c > 0x7f) {
        p = start + b.write(s.includes('\u0000') ? s.replaceAll('\u0000', '') : s, start, 'utf8');
        break;
      }
      b[p++] = c;
    }
    this.int32(p - start);
    this.used = p;
  }

  private int2(n: number): void {
    const v = Number.isInteger(n) && n >= -32768 && n <= 32767 ? n : 0; // NOT NULL: status
    this.int32(2);
    this.bytes[this.used++] = (v >>> 8) & 0xff;
    this.bytes[this.used++] = v & 0xff;
  }

  private int4(n: number | null): void {
    if (n === null || !Number.isInteger(n) || n < INT4_MIN || n > INT4_MAX) return this.int32(-1);
    this.int32(4);
    this.int32(n);
  }

  /** A whole number of up to 53 bits as int8: its high and low 32 bits (the high ones sign-extended). */
  private int8(n: number | null, notNull: boolean): void {
    if (n === null || !Number.isSafeInteger(n)) return notNull ? this.int8(0, true) : this.int32(-1);
    const high = Math.floor(n / TWO_32);
    this.int32(8);
    this.int32(high | 0);
    this.int32((n - high * TWO_32) >>> 0);
  }

  private float4(n: number | null, notNull: boolean): void {
    if (n === null || !Number.isFinite(n)) return notNull ? this.float4(0, true) : this.int32(-1);
    this.int32(4);
    this.bytes.writeFloatBE(n, this.used);
    this.used += 4;
  }

  private ensure(room: number): void {
    // Room for the trailer too (see copy()).
    if (this.used + room + TRAILER.length <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.used + room + TRAILER.length));
    this.bytes.copy(bigger, 0, 0, this.used);
    this.bytes = bigger;
  }

  /** The batch as COPY's data: the header, the tuples and the trailer. */
  copy(): Buffer {
    this.bytes.set(TRAILER, this.used);
    return this.bytes.subarray(0, this.used + TRAILER.length);
  }

  /** The tuples alone (what a spill file keeps; ofTuples reads them back). */
  tuples(): Buffer {
    return this.bytes.subarray(HEADER.length, this.used);
  }

  private start(i: number): number {
    return i === 0 ? HEADER.length : this.ends[i - 1];
  }

  /** The rows, read back from their tuples (the ring's insert of a batch, and the tests). */
  rows(): RequestLogRow[] {
    return this.ends.map((_, i) => rowOfTuple(this.bytes, this.start(i)));
  }

  /** The rows `keep` says, in order (a batch some of whose rows expired). */
  filter(keep: readonly boolean[]): CopyRows {
    const kept = new CopyRows(this.used);
    this.ends.forEach((end, i) => {
      if (!keep[i]) return;
      const start = this.start(i);
      kept.bytes.set(this.bytes.subarray(start, end), kept.used);
      kept.used += end - start;
      kept.ends.push(kept.used);
      kept.times.push(this.times[i]);
    });
    return kept;
  }
}

const len = (s: string | null): number => (s === null ? 4 : s.length);

/** A tuple's time field (its length at `p`): epoch ms. */
function readTime(b: Buffer, p: number): number {
  if (b.readInt32BE(p) !== 8) throw new Error('a request row without its time');
  return (b.readInt32BE(p + 4) * TWO_32 + b.readUInt32BE(p + 8)) / 1000 + EPOCH_2000_MS;
}

/** The row a tuple at `p` holds. */
function rowOfTuple(b: Buffer, p: number): RequestLogRow {
  const values: (string | number | null)[] = [];
  p += 2;
  for (let f = 0; f < FIELDS; f++) {
    const n = b.readInt32BE(p);
    p += 4;
    if (n < 0) {
      values.push(null);
      continue;
    }
    const kind = KINDS[f];
    if (kind === 'text') values.push(b.toString('utf8', p, p + n));
    else if (kind === 'int2') values.push(b.readInt16BE(p));
    else if (kind === 'int4') values.push(b.readInt32BE(p));
    else if (kind === 'int8') values.push(b.readInt32BE(p) * TWO_32 + b.readUInt32BE(p + 4));
    // A duration is held to the µs (./request-log.ts); float4 keeps that below 16.7 s, as the column does.
    else values.push(Math.round(b.readFloatBE(p) * 1000) / 1000);
    p += n;
  }
  values[0] = (values[0] as number) / 1000 + EPOCH_2000_MS; // µs since 2000, as epoch ms
  return rowOfValues(values);
}

/** A row of its values in COPY_COLUMNS' order (also how an earlier version's spill files held them). */
export function rowOfValues(v: readonly unknown[]): RequestLogRow {
  return Object.fromEntries(ROW_FIELDS.map((field, i) => [field, v[i]])) as unknown as RequestLogRow;
}
