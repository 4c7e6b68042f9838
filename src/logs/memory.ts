import type { BodyMode } from './bodies';
import { logIdOf, positionOfId } from './position';
import type { CopyRows } from './copy-rows';
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
  Surface,
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

/** Rows per block of the request ring: a block holds its rows' values and the strings they name. */
const BLOCK_ROWS = 4096;
/** Index slots the request ring starts with (it doubles up to twice its capacity, then compacts in place). */
const FIRST_SLOTS = 4096;

/** A row's numbers but its time (the ring's index holds it), in a block's `numbers` (null is NaN). */
const N_STATUS = 0;
const N_INPUT = 1;
const N_OUTPUT = 2;
const N_CACHED = 3;
const N_CACHE_WRITE = 4;
const N_REASONING = 5;
const N_COST = 6;
const N_LATENCY = 7;
const N_TTFB = 8;
const N_REQUEST_BYTES = 9;
const N_RESPONSE_BYTES = 10;
const NUMBERS = 11;

/** A row's strings but its request id, as ids into its block's strings (0 is null): most repeat row to row. */
const S_ACCOUNT = 0;
const S_KEY = 1;
const S_SURFACE = 2;
const S_METHOD = 3;
const S_ROUTE = 4;
const S_MODEL = 5;
const S_UPSTREAM = 6;
const S_UPSTREAM_MODEL = 7;
const S_ERROR = 8;
const S_AGENT = 9;
const S_IP = 10;
const S_TASK = 11;
const S_BATCH = 12;
const STRINGS = 13;

/**
 * Up to BLOCK_ROWS rows' values in typed arrays, and the distinct strings they name (a key, a model, a user agent
 * repeat from call to call: each is held once per block). A block goes when its last row does.
 */
class Block {
  readonly numbers = new Float64Array(BLOCK_ROWS * NUMBERS);
  readonly strings = new Int32Array(BLOCK_ROWS * STRINGS);
  readonly texts: string[] = [''];
  private readonly ids = new Map<string, number>();
  /** Each field's last string and its id: a field most often names what the row before named. */
  private readonly lastText: (string | null)[] = new Array<string | null>(STRINGS).fill(null);
  private readonly lastId = new Int32Array(STRINGS);
  /**
   * The request ids, unique to a row, as bytes: a string per row would be a hundred thousand more objects for every
   * full collection to mark, where the rest of the block is a few.
   */
  private ids8 = Buffer.allocUnsafeSlow(BLOCK_ROWS * 40);
  private ids8Used = 0;
  private readonly idAt = new Int32Array(BLOCK_ROWS);
  private readonly idLength = new Int32Array(BLOCK_ROWS);
  rows = 0;
  live = 0;

  private idOf(field: number, text: string | null): number {
    if (text === null) return 0;
    if (text === this.lastText[field]) return this.lastId[field];
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.texts.push(text) - 1;
      this.ids.set(text, id);
    }
    this.lastText[field] = text;
    this.lastId[field] = id;
    return id;
  }

  /** The id a filter's value has here: -1 when no row of this block names it. */
  knownId(text: string): number {
    return this.ids.get(text) ?? -1;
  }

  add(r: RequestLogRow): number {
    const row = this.rows++;
    const n = row * NUMBERS;
    const v = this.numbers;
    v[n + N_STATUS] = r.status;
    v[n + N_INPUT] = r.inputTokens ?? NaN;
    v[n + N_OUTPUT] = r.outputTokens ?? NaN;
    v[n + N_CACHED] = r.cachedTokens ?? NaN;
    v[n + N_CACHE_WRITE] = r.cacheWriteTokens ?? NaN;
    v[n + N_REASONING] = r.reasoningTokens ?? NaN;
    v[n + N_COST] = r.costMicros;
    v[n + N_LATENCY] = r.latencyMs;
    v[n + N_TTFB] = r.ttfbMs ?? NaN;
    v[n + N_REQUEST_BYTES] = r.requestBytes ?? NaN;
    v[n + N_RESPONSE_BYTES] = r.responseBytes ?? NaN;
    const s = row * STRINGS;
    const t = this.strings;
    this.keepRequestId(row, r.requestId);
    t[s + S_ACCOUNT] = this.idOf(S_ACCOUNT, r.accountId);
    t[s + S_KEY] = this.idOf(S_KEY, r.keyId);
    t[s + S_SURFACE] = this.idOf(S_SURFACE, r.surface);
    t[s + S_METHOD] = this.idOf(S_METHOD, r.method);
    t[s + S_ROUTE] = this.idOf(S_ROUTE, r.route);
    t[s + S_MODEL] = this.idOf(S_MODEL, r.model);
    t[s + S_UPSTREAM] = this.idOf(S_UPSTREAM, r.upstream);
    t[s + S_UPSTREAM_MODEL] = this.idOf(S_UPSTREAM_MODEL, r.upstreamModel);
    t[s + S_ERROR] = this.idOf(S_ERROR, r.errorType);
    t[s + S_AGENT] = this.idOf(S_AGENT, r.userAgent);
    t[s + S_IP] = this.idOf(S_IP, r.clientIp);
    t[s + S_TASK] = this.idOf(S_TASK, r.taskId);
    t[s + S_BATCH] = this.idOf(S_BATCH, r.batchId);
    this.live++;
    return row;
  }

  private keepRequestId(row: number, id: string): void {
    const most = id.length * 3;
    if (this.ids8Used + most > this.ids8.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.ids8.length * 2, this.ids8Used + most));
      this.ids8.copy(grown, 0, 0, this.ids8Used);
      this.ids8 = grown;
    }
    const length = this.ids8.write(id, this.ids8Used, 'utf8');
    this.idAt[row] = this.ids8Used;
    this.idLength[row] = length;
    this.ids8Used += length;
  }

  private requestIdOf(row: number): string {
    return this.ids8.toString('utf8', this.idAt[row], this.idAt[row] + this.idLength[row]);
  }

  stringAt(row: number, field: number): number {
    return this.strings[row * STRINGS + field];
  }

  numberAt(row: number, field: number): number {
    return this.numbers[row * NUMBERS + field];
  }

  row(row: number, time: number): RequestLogRow {
    const v = this.numbers;
    const n = row * NUMBERS;
    const num = (i: number) => (Number.isNaN(v[n + i]) ? null : v[n + i]);
    const s = row * STRINGS;
    const str = (i: number) => {
      const id = this.strings[s + i];
      return id === 0 ? null : this.texts[id];
    };
    return {
      time,
      requestId: this.requestIdOf(row),
      accountId: str(S_ACCOUNT),
      keyId: str(S_KEY),
      surface: str(S_SURFACE) as Surface,
      method: str(S_METHOD)!,
      route: str(S_ROUTE)!,
      model: str(S_MODEL),
      upstream: str(S_UPSTREAM),
      upstreamModel: str(S_UPSTREAM_MODEL),
      status: v[n + N_STATUS],
      errorType: str(S_ERROR),
      inputTokens: num(N_INPUT),
      outputTokens: num(N_OUTPUT),
      cachedTokens: num(N_CACHED),
      cacheWriteTokens: num(N_CACHE_WRITE),
      reasoningTokens: num(N_REASONING),
      costMicros: v[n + N_COST],
      latencyMs: v[n + N_LATENCY],
      ttfbMs: num(N_TTFB),
      userAgent: str(S_AGENT),
      clientIp: str(S_IP),
      taskId: str(S_TASK),
      batchId: str(S_BATCH),
      requestBytes: num(N_REQUEST_BYTES),
      responseBytes: num(N_RESPONSE_BYTES),
    };
  }
}

/**
 * The request rows of this process, at most `capacity`, in time order (then arrival), newest kept. A row's values go
 * into typed arrays of its block, as they are: nothing is encoded or copied per call, and a hundred thousand rows are
 * a few dozen blocks to the garbage collector, not a few hundred thousand objects it would promote and trace while
 * the gateway runs. The index (time, sequence, block, row) is kept in time order; rows arrive nearly in order (a
 * call's row is written when it ends), so an insert moves it a step or two.
 */
class RequestRing {
  private time = new Float64Array(FIRST_SLOTS);
  private seq = new Float64Array(FIRST_SLOTS);
  private block = new Int32Array(FIRST_SLOTS);
  private row = new Int32Array(FIRST_SLOTS);
  private head = 0;
  private tail = 0;
  private lastSeq = 0;
  private readonly blocks = new Map<number, Block>();
  private current = -1;
  /** Kept bodies (`logs.bodies: full`), by row sequence: the few calls that have them. */
  private readonly bodies = new Map<number, RequestBodies>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.tail - this.head;
  }

  add(r: RequestLogRow, kept?: RequestBodies): void {
    let block = this.blocks.get(this.current);
    if (!block || block.rows === BLOCK_ROWS) this.blocks.set(++this.current, (block = new Block()));
    const row = block.add(r);
    if (this.tail === this.time.length) this.makeRoom();
    let at = this.tail;
    while (at > this.head && this.time[at - 1] > r.time) at--;
    if (at < this.tail) for (const a of this.columns()) a.copyWithin(at + 1, at, this.tail);
    this.tail++;
    const seq = ++this.lastSeq;
    this.time[at] = r.time;
    this.seq[at] = seq;
    this.block[at] = this.current;
    this.row[at] = row;
    if (kept) this.bodies.set(seq, kept);
    while (this.size > this.capacity) this.evict();
  }

  private columns() {
    return [this.time, this.seq, this.block, this.row];
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
      const grow = <T extends Float64Array | Int32Array>(a: T, make: (n: number) => T): T => {
        const next = make(a.length * 2);
        next.set(a.subarray(this.head, this.tail));
        return next;
      };
      this.time = grow(this.time, (n) => new Float64Array(n));
      this.seq = grow(this.seq, (n) => new Float64Array(n));
      this.block = grow(this.block, (n) => new Int32Array(n));
      this.row = grow(this.row, (n) => new Int32Array(n));
    }
    this.tail = live;
    this.head = 0;
  }

  private evict(): void {
    const id = this.block[this.head];
    const block = this.blocks.get(id);
    if (block && --block.live === 0 && id !== this.current) this.blocks.delete(id);
    if (this.bodies.size) this.bodies.delete(this.seq[this.head]);
    this.head++;
  }

  /** Drops rows older than `before`. */
  trim(before: number): void {
    while (this.head < this.tail && this.time[this.head] < before) this.evict();
  }

  private stored(i: number): StoredRequestLog {
    const time = this.time[i];
    return { ...this.blocks.get(this.block[i])!.row(this.row[i], time), logId: logIdOf(time, this.seq[i]) };
  }

  /** Newest first, strictly before `after`, matching `filter`, up to `limit`. */
  page(filter: RequestLogFilter, limit: number, after?: Position): PageOf<StoredRequestLog> {
    const rows: StoredRequestLog[] = [];
    const [low, high] = filter.status ?? [0, Infinity];
    const afterSeq = after ? Number(after.seq) : 0;
    const { from, to, accountId, keyId } = filter;
    // A filter's account and key as ids of the block at hand (looked up once per block met).
    let seen: Block | undefined;
    let account = 0;
    let key = 0;
    for (let i = this.tail - 1; i >= this.head; i--) {
      const time = this.time[i];
      if (to !== undefined && time >= to) continue;
      if (from !== undefined && time < from) break;
      if (after && (time > after.time || (time === after.time && this.seq[i] >= afterSeq))) continue;
      const block = this.blocks.get(this.block[i])!;
      const row = this.row[i];
      if (block !== seen) {
        seen = block;
        account = accountId === undefined ? 0 : block.knownId(accountId);
        key = keyId === undefined ? 0 : block.knownId(keyId);
      }
      if (accountId !== undefined && block.stringAt(row, S_ACCOUNT) !== account) continue;
      if (keyId !== undefined && block.stringAt(row, S_KEY) !== key) continue;
      const status = block.numberAt(row, N_STATUS);
      if (status < low || status > high) continue;
      const stored = this.stored(i);
      if (!matchesRequest(filter, stored)) continue;
      if (rows.length === limit) {
        const last = rows[rows.length - 1];
        return { rows, next: positionOfId(last.logId) };
      }
      rows.push(stored);
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
    this.requestRing.add(row, bodies);
  }

  async insertRequests(batchId: string, rows: RequestLogRow[], bodies: RequestBodies[]): Promise<void> {
    if (!this.once(batchId)) return;
    const byRequest = new Map(bodies.map((b) => [`${b.time}|${b.requestId}`, b]));
    for (const row of rows) this.requestRing.add(row, byRequest.get(`${row.time}|${row.requestId}`));
  }

  async insertCopy(batchId: string, copy: CopyRows, bodies: RequestBodies[]): Promise<void> {
    await this.insertRequests(batchId, copy.rows(), bodies);
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
