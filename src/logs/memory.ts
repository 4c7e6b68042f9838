import type { BodyMode } from './bodies';
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

/**
 * Embedded mode without a database: the last `requestRows` rows and `auditRows` changes of this process, and each
 * kept body for `bodyRetentionDays`. The same API as PostgreSQL; a restart forgets them.
 */
export class MemoryLogStore implements LogStore {
  readonly kind = 'memory' as const;
  private readonly requestRing: TimeRing<RequestLogRow & { bodies?: RequestBodies }>;
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
    this.requestRing = new TimeRing(options.requestRows);
    this.auditRing = new TimeRing(options.auditRows);
  }

  private once(batchId: string): boolean {
    if (this.seen.has(batchId)) return false;
    if (this.seen.size > 10_000) this.seen.clear();
    this.seen.add(batchId);
    return true;
  }

  async insertRequests(batchId: string, rows: RequestLogRow[], bodies: RequestBodies[]): Promise<void> {
    if (!this.once(batchId)) return;
    const byRequest = new Map(bodies.map((b) => [`${b.time}|${b.requestId}`, b]));
    for (const row of rows) {
      const kept = byRequest.get(`${row.time}|${row.requestId}`);
      this.requestRing.add(row.time, kept ? { ...row, bodies: kept } : row);
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
    const page = this.requestRing.page(
      limit,
      (r) => matchesRequest(filter, r),
      after,
      filter.from,
      filter.to,
    );
    return {
      rows: page.rows.map((e) => {
        const { bodies: _bodies, ...row } = e.row;
        return { ...row, logId: logIdOf(e.time, e.seq) };
      }),
      next: page.next,
    };
  }

  async request(logId: string) {
    const at = positionOfId(logId);
    const e = at && this.requestRing.find(at.time, Number(at.seq));
    if (!e) return null;
    const { bodies, ...row } = e.row;
    const fresh = bodies && bodies.time >= Date.now() - this.options.bodyRetentionDays * DAY_MS;
    return { ...row, logId, bodies: fresh ? bodies : null };
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
