import type { BodyMode } from './bodies';
import { rowLine, rowOfLine } from './row-line';
import type {
  AuditFilter,
  AuditRow,
  LogStore,
  PageOf,
  Position,
  RequestBodies,
  RequestLogFilter,
  RequestLogRow,
  StoredAuditRow,
  StoredRequestLog,
} from './types';

const DAY_MS = 86_400_000;

interface Entry<T> {
  time: number;
  seq: number;
  row: T;
}

/**
 * Rows in time order (then arrival), at most `capacity`: the oldest go first. Rows arrive nearly in order (a call's
 * row is written when it ends), so an insert walks back a step or two from the end.
 */
class TimeRing<T> {
  private items: Entry<T>[] = [];
  private head = 0;
  private seq = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  add(time: number, row: T): Entry<T> {
    const entry = { time, seq: ++this.seq, row };
    let at = this.items.length;
    while (at > this.head && this.items[at - 1].time > time) at--;
    if (at === this.items.length) this.items.push(entry);
    else this.items.splice(at, 0, entry);
    if (this.size > this.capacity) this.head++;
    this.compact();
    return entry;
  }

  /** Drops rows older than `before`. */
  trim(before: number): void {
    while (this.head < this.items.length && this.items[this.head].time < before) this.head++;
    this.compact();
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Newest first, strictly before `after`, keeping those `match` accepts, up to `limit`. */
  page(
    limit: number,
    match: (row: T) => boolean,
    after?: Position,
    from?: number,
    to?: number,
  ): PageOf<Entry<T>> {
    const rows: Entry<T>[] = [];
    const afterSeq = after ? Number(after.seq) : 0;
    for (let i = this.items.length - 1; i >= this.head; i--) {
      const e = this.items[i];
      if (to !== undefined && e.time >= to) continue;
      if (from !== undefined && e.time < from) break;
      if (after && (e.time > after.time || (e.time === after.time && e.seq >= afterSeq))) continue;
      if (!match(e.row)) continue;
      if (rows.length === limit) {
        const last = rows[rows.length - 1];
        return { rows, next: { time: last.time, seq: String(last.seq) } };
      }
      rows.push(e);
    }
    return { rows, next: null };
  }

  find(time: number, seq: number): Entry<T> | undefined {
    for (let i = this.items.length - 1; i >= this.head; i--) {
      const e = this.items[i];
      if (e.time === time && e.seq === seq) return e;
      if (e.time < time) return undefined;
    }
    return undefined;
  }
}

export function matchesRequest(f: RequestLogFilter, r: RequestLogRow): boolean {
  return (
    (f.accountId === undefined || r.accountId === f.accountId) &&
    (f.keyId === undefined || r.keyId === f.keyId) &&
    (f.model === undefined || r.model === f.model) &&
    (f.status === undefined || (r.status >= f.status[0] && r.status <= f.status[1])) &&
    (f.upstream === undefined || r.upstream === f.upstream) &&
    (f.surface === undefined || r.surface === f.surface) &&
    (f.requestId === undefined || r.requestId === f.requestId) &&
    (f.taskId === undefined || r.taskId === f.taskId)
  );
}

export function matchesAudit(f: AuditFilter, r: AuditRow): boolean {
  return (
    (f.accountId === undefined || r.accountId === f.accountId) &&
    (f.actor === undefined || r.actor === f.actor) &&
    (f.action === undefined || r.action === f.action || r.action.startsWith(`${f.action}.`)) &&
    (f.target === undefined || r.target === f.target)
  );
}

/** The id of a row: its time and its sequence, which is also where the page after it starts. */
export function logIdOf(time: number, seq: string | number): string {
  return `${time}.${seq}`;
}

export function positionOfId(logId: string): Position | null {
  const m = /^(\d{1,15})\.(\d{1,19})$/.exec(logId);
  return m ? { time: Number(m[1]), seq: m[2] } : null;
}

/** Bytes per segment of the request ring: rows are appended to the newest; a segment goes once its last row did. */
const SEGMENT_BYTES = 1 << 20;
/** Index slots the request ring starts with (it doubles up to twice its capacity, then compacts in place). */
const FIRST_SLOTS = 4096;

interface Segment {
  readonly buf: Buffer;
  used: number;
  /** Rows of this segment still in the ring. */
  live: number;
}

/**
 * The request rows of this process, at most `capacity`, in time order (then arrival), newest kept. Each row is its
 * line (./row-line.ts) written into 1 MiB buffers, with its time, sequence, place, account, key and status in typed
 * arrays: a hundred thousand rows are a few dozen buffers to the garbage collector, not a few hundred thousand
 * objects it would promote and trace while the gateway runs. Filters on account, key and status are read off the
 * index; a row is parsed only when a query reaches it. Rows arrive nearly in order (a call's row is written when it
 * ends), so an insert moves the index a step or two.
 */
class RequestRing {
  private time = new Float64Array(FIRST_SLOTS);
  private seq = new Float64Array(FIRST_SLOTS);
  private seg = new Int32Array(FIRST_SLOTS);
  private off = new Int32Array(FIRST_SLOTS);
  private len = new Int32Array(FIRST_SLOTS);
  private account = new Int32Array(FIRST_SLOTS);
  private key = new Int32Array(FIRST_SLOTS);
  private status = new Uint16Array(FIRST_SLOTS);
  private head = 0;
  private tail = 0;
  private lastSeq = 0;
  private readonly segments = new Map<number, Segment>();
  private current = -1;
  /** Account and key ids as small numbers (0 for none): what the index holds and filters compare. */
  private readonly ids = new Map<string, number>();
  /** Kept bodies (`logs.bodies: full`), by row sequence: the few calls that have them. */
  private readonly bodies = new Map<number, RequestBodies>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.tail - this.head;
  }

  private idOf(value: string | null): number {
    if (value === null) return 0;
    let id = this.ids.get(value);
    if (id === undefined) this.ids.set(value, (id = this.ids.size + 1));
    return id;
  }

  /** The id a filter value has in the index: undefined when no row ever had it. */
  private knownId(value: string | undefined): number | undefined {
    return value === undefined ? undefined : (this.ids.get(value) ?? -1);
  }

  add(row: RequestLogRow, line: string, kept?: RequestBodies): void {
    let segment = this.segments.get(this.current);
    if (!segment || segment.used + line.length * 3 > SEGMENT_BYTES) {
      segment = { buf: Buffer.allocUnsafeSlow(Math.max(SEGMENT_BYTES, line.length * 3)), used: 0, live: 0 };
      this.segments.set(++this.current, segment);
    }
    const bytes = segment.buf.write(line, segment.used, 'utf8');
    if (this.tail === this.time.length) this.makeRoom();
    let at = this.tail;
    while (at > this.head && this.time[at - 1] > row.time) at--;
    if (at < this.tail) for (const a of this.columns()) a.copyWithin(at + 1, at, this.tail);
    this.tail++;
    const seq = ++this.lastSeq;
    this.time[at] = row.time;
    this.seq[at] = seq;
    this.seg[at] = this.current;
    this.off[at] = segment.used;
    this.len[at] = bytes;
    this.account[at] = this.idOf(row.accountId);
    this.key[at] = this.idOf(row.keyId);
    this.status[at] = row.status;
    segment.used += bytes;
    segment.live++;
    if (kept) this.bodies.set(seq, kept);
    while (this.size > this.capacity) this.evict();
  }

  private columns() {
    return [this.time, this.seq, this.seg, this.off, this.len, this.account, this.key, this.status];
  }

  /** Compacts the index to its start, or doubles it (up to twice the capacity) when most of it is live. */
  private makeRoom(): void {
    const live = this.size;
    if (
      this.head > 0 &&
      (live * 2 <= this.time.length || this.time.length >= this.capacity * 2 + FIRST_SLOTS)
    ) {
      for (const a of this.columns()) a.copyWithin(0, this.head, this.tail);
    } else {
      const grow = <T extends Float64Array | Int32Array | Uint16Array>(a: T, make: (n: number) => T): T => {
        const next = make(a.length * 2);
        next.set(a.subarray(this.head, this.tail));
        return next;
      };
      this.time = grow(this.time, (n) => new Float64Array(n));
      this.seq = grow(this.seq, (n) => new Float64Array(n));
      this.seg = grow(this.seg, (n) => new Int32Array(n));
      this.off = grow(this.off, (n) => new Int32Array(n));
      this.len = grow(this.len, (n) => new Int32Array(n));
      this.account = grow(this.account, (n) => new Int32Array(n));
      this.key = grow(this.key, (n) => new Int32Array(n));
      this.status = grow(this.status, (n) => new Uint16Array(n));
    }
    this.tail = live;
    this.head = 0;
  }

  private evict(): void {
    const id = this.seg[this.head];
    const segment = this.segments.get(id);
    if (segment && --segment.live === 0 && id !== this.current) this.segments.delete(id);
    if (this.bodies.size) this.bodies.delete(this.seq[this.head]);
    this.head++;
  }

  /** Drops rows older than `before`. */
  trim(before: number): void {
    while (this.head < this.tail && this.time[this.head] < before) this.evict();
  }

  private row(i: number): RequestLogRow {
    const segment = this.segments.get(this.seg[i])!;
    return rowOfLine(segment.buf.toString('utf8', this.off[i], this.off[i] + this.len[i]));
  }

  private stored(i: number): StoredRequestLog {
    return { ...this.row(i), logId: logIdOf(this.time[i], this.seq[i]) };
  }

  /** Newest first, strictly before `after`, matching `filter`, up to `limit`. */
  page(filter: RequestLogFilter, limit: number, after?: Position): PageOf<StoredRequestLog> {
    const rows: StoredRequestLog[] = [];
    const account = this.knownId(filter.accountId);
    const key = this.knownId(filter.keyId);
    if (account === -1 || key === -1) return { rows, next: null };
    const [low, high] = filter.status ?? [0, 65535];
    const afterSeq = after ? Number(after.seq) : 0;
    const { from, to } = filter;
    for (let i = this.tail - 1; i >= this.head; i--) {
      const time = this.time[i];
      if (to !== undefined && time >= to) continue;
      if (from !== undefined && time < from) break;
      if (after && (time > after.time || (time === after.time && this.seq[i] >= afterSeq))) continue;
      if (account !== undefined && this.account[i] !== account) continue;
      if (key !== undefined && this.key[i] !== key) continue;
      if (this.status[i] < low || this.status[i] > high) continue;
      const row = this.stored(i);
      if (!matchesRequest(filter, row)) continue;
      if (rows.length === limit) {
        const last = rows[rows.length - 1];
        return { rows, next: positionOfId(last.logId) };
      }
      rows.push(row);
    }
    return { rows, next: null };
  }

  /** A row and its kept bodies, by its position. */
  find(time: number, seq: number): { row: StoredRequestLog; bodies: RequestBodies | undefined } | undefined {
    for (let i = this.tail - 1; i >= this.head; i--) {
      if (this.time[i] === time && this.seq[i] === seq)
        return { row: this.stored(i), bodies: this.bodies.get(seq) };
      if (this.time[i] < time) return undefined;
    }
    return undefined;
  }
}

/**
 * Embedded mode without a database: the last `requestRows` rows and `auditRows` changes of this process, and each
 * kept body for `bodyRetentionDays`. The same API as PostgreSQL; a restart forgets them. Rows are taken as they
 * come (`take`): nothing waits in a queue.
 */
export class MemoryLogStore implements LogStore {
  readonly kind = 'memory' as const;
  private readonly requestRing: RequestRing;
  private readonly auditRing: TimeRing<AuditRow>;
  /** Batches taken (by id), so a replayed batch is not added twice. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly options: {
      requestRows: number;
      auditRows: number;
      retentionDays: number;
      auditRetentionDays: number;
      bodyRetentionDays: number;
    },
  ) {
    this.requestRing = new RequestRing(options.requestRows);
    this.auditRing = new TimeRing(options.auditRows);
  }

  private once(batchId: string): boolean {
    if (this.seen.has(batchId)) return false;
    if (this.seen.size > 10_000) this.seen.clear();
    this.seen.add(batchId);
    return true;
  }

  /** One row, as its call ends. */
  take(row: RequestLogRow, bodies?: RequestBodies): void {
    this.requestRing.add(row, rowLine(row), bodies);
  }

  async insertRequests(batchId: string, rows: RequestLogRow[], bodies: RequestBodies[]): Promise<void> {
    await this.insertLines(
      batchId,
      rows.map(rowLine),
      rows.map((r) => r.time),
      bodies,
    );
  }

  async insertLines(
    batchId: string,
    lines: string[],
    _times: number[],
    bodies: RequestBodies[],
  ): Promise<void> {
    if (!this.once(batchId)) return;
    const byRequest = new Map(bodies.map((b) => [`${b.time}|${b.requestId}`, b]));
    for (const line of lines) {
      const row = rowOfLine(line);
      this.requestRing.add(row, line, byRequest.get(`${row.time}|${row.requestId}`));
    }
  }

  async insertAudit(batchId: string, rows: AuditRow[]): Promise<void> {
    if (!this.once(batchId)) return;
    for (const row of rows) this.auditRing.add(row.time, row);
  }

  async requests(
    filter: RequestLogFilter,
    limit: number,
    after?: Position,
  ): Promise<PageOf<StoredRequestLog>> {
    return this.requestRing.page(filter, limit, after);
  }

  async request(logId: string) {
    const at = positionOfId(logId);
    const found = at && this.requestRing.find(at.time, Number(at.seq));
    if (!found) return null;
    const { row, bodies } = found;
    const fresh = bodies && bodies.time >= Date.now() - this.options.bodyRetentionDays * DAY_MS;
    return { ...row, bodies: fresh ? bodies : null };
  }

  async audit(filter: AuditFilter, limit: number, after?: Position): Promise<PageOf<StoredAuditRow>> {
    const page = this.auditRing.page(limit, (r) => matchesAudit(filter, r), after, filter.from, filter.to);
    return {
      rows: page.rows.map((e) => ({ ...e.row, auditId: logIdOf(e.time, e.seq) })),
      next: page.next,
    };
  }

  async maintain(now: number): Promise<void> {
    this.requestRing.trim(now - this.options.retentionDays * DAY_MS);
    this.auditRing.trim(now - this.options.auditRetentionDays * DAY_MS);
  }

  private readonly bodyModes = new Map<string, BodyMode>();

  async bodySettings(): Promise<Map<string, BodyMode>> {
    return new Map(this.bodyModes);
  }

  async setBodySetting(scope: string, mode: BodyMode | null): Promise<void> {
    if (mode === null) this.bodyModes.delete(scope);
    else this.bodyModes.set(scope, mode);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
