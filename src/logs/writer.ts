import { randomUUID } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { CopyRows } from './copy-rows';
import { batchRows, type LogSpill, type SpilledBatch } from './spill';
import type { AuditRow, LogStore, RequestBodies, RequestLogRow } from './types';

export interface WriterOptions {
  bufferRows: number;
  batchRows: number;
  flushMs: number;
  /** Rows older than this are not written (their partition is gone): epoch ms, from the clock. */
  oldestKept(table: 'requests' | 'audit'): number;
}

/**
 * A refusal of the batch itself, not of the moment (PostgreSQL's data exceptions, integrity and syntax errors, by
 * SQLSTATE class): sending it again would fail again, and a spilled one would block every replay after it.
 */
function refusedForGood(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|42)[0-9A-Z]{3}$/.test(code);
}

/**
 * Gateway calls' rows wait this many at most before they are taken (encoded into a batch, or into the ring), all in
 * one go: the encoder runs over a batch, not once per call between the rest of a call's work. Taken so, what logs to
 * PostgreSQL add to a call's CPU fell by about a third in bench:logs:gateway's open loop (docs/performance.md). A
 * flush (the timer, a query's read-your-writes, the close) takes them first, whatever their number.
 */
const CALLS_AT_ONCE = 64;

/** How long after a failed write the database is tried again (doubling up to the cap). */
const RETRY_MS = 250;
const MAX_RETRY_MS = 5000;

/**
 * Takes rows off the request path and writes them in batches: a push is an array push (or a counted drop when
 * `bufferRows` wait already); a timer (and a full batch) sends what waits, one write at a time, on the store's own
 * connection. When the store cannot take a batch, it goes to the spill files and every later batch too, without
 * waiting on the store, until a write goes through again; then the spilled batches are replayed.
 */
export class LogWriter {
  /**
   * Queued request rows, as their tuples' bytes, a batch's worth per CopyRows (the last one filling): a row waits up to
   * `flushMs`, long enough for the garbage collector to promote anything on the heap, and bytes outside it are
   * neither promoted nor marked.
   */
  private batches: CopyRows[] = [];
  /** Rows in `batches`. */
  private waiting = 0;
  /** Batches sent, kept to be filled again (see fresh()). */
  private readonly spare: CopyRows[] = [];
  /** The kept bodies of queued rows (the few calls whose mode is `full`), by the row's place in the queue's life. */
  private kept: { at: number; bodies: RequestBodies }[] = [];
  /** Rows queued, and rows taken from the queue, since the start. */
  private queued = 0;
  private dequeued = 0;
  private audit: AuditRow[] = [];
  /** Gateway calls' rows not taken yet (fewer than CALLS_AT_ONCE). */
  private calls: RequestLogRow[] = [];
  private chain: Promise<void> = Promise.resolve();
  /** The drain queued behind the running one, not started yet. */
  private next: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private soon = false;
  private down = false;
  private retryAt = 0;
  private retryMs = RETRY_MS;
  /** Spill files (this process's or a dead one's) may be waiting from before: checked after the first write. */
  private replayDue = true;
  private closed = false;

  /** Bound once: a drop under overload costs an increment. */
  private readonly overloaded: { inc(): void };
  /** The store's own `take`, when it keeps rows in this process; rows so taken are counted at the next flush. */
  private readonly takeNow: ((row: RequestLogRow, bodies?: RequestBodies) => void) | undefined;
  private taken = 0;

  constructor(
    private readonly store: LogStore,
    private readonly spill: LogSpill | undefined,
    private readonly options: WriterOptions,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {
    this.overloaded = metrics.logsRowsDropped.labels('requests', 'overload');
    this.takeNow = store.take?.bind(store);
    this.timer = setInterval(() => void this.flush(), options.flushMs);
    this.timer.unref();
  }

  /** Queues a request row (and its kept bodies), or hands it to a store in this process: no I/O, no promise. */
  pushRequest(row: RequestLogRow, bodies?: RequestBodies): void {
    if (this.takeNow && !this.closed) {
      this.takeNow(row, bodies);
      this.taken++;
      return;
    }
    if (this.waiting >= this.options.bufferRows || this.closed) {
      this.overloaded.inc();
      return;
    }
    let open = this.batches[this.batches.length - 1];
    if (open === undefined || open.count >= this.options.batchRows) this.batches.push((open = this.fresh()));
    open.pushRow(row);
    this.waiting++;
    if (bodies) this.kept.push({ at: this.queued, bodies });
    this.queued++;
    if (open.count >= this.options.batchRows) this.flushSoon();
  }

  /** A gateway call's row: taken with up to CALLS_AT_ONCE - 1 others, or at the next flush. */
  pushCallRow(row: RequestLogRow): void {
    if (this.closed) return this.pushRequest(row); // counted as dropped, as any row after the close
    if (this.calls.push(row) === CALLS_AT_ONCE) this.takeCalls();
  }

  /** Takes the waiting calls' rows: queued (or handed to a store in this process), in the order they came. */
  private takeCalls(): void {
    const rows = this.calls;
    this.calls = [];
    for (const row of rows) this.pushRequest(row);
  }

  pushAudit(row: AuditRow): void {
    if (this.audit.length >= this.options.bufferRows) {
      this.metrics.logsRowsDropped.inc({ table: 'audit', reason: 'overload' });
      return;
    }
    this.audit.push(row);
    this.flushSoon();
  }

  private flushSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => {
      this.soon = false;
      void this.flush();
    });
  }

  /**
   * A batch to fill: one sent before, emptied, when there is one. A new buffer of a batch's size (about 400 bytes a
   * row) costs its pages' first touch and, as external memory, pushes V8 to collect sooner: both dearer than the rows.
   */
  private fresh(): CopyRows {
    return this.spare.pop()?.reset() ?? new CopyRows(Math.min(this.options.batchRows, 4096) * 400);
  }

  get depth(): { requests: number; audit: number } {
    return { requests: this.waiting + this.calls.length, audit: this.audit.length };
  }

  /**
   * Writes (or spills) everything queued so far; resolves when it is done. Never rejects. One drain waits at most
   * behind the one running (a slow database does not grow a chain of them): it takes whatever has arrived by then.
   */
  flush(): Promise<void> {
    if (this.calls.length) this.takeCalls();
    if (this.next) return this.next;
    const next = this.chain
      .then(() => {
        this.next = undefined;
        return this.drain();
      })
      .catch((err: unknown) => {
        this.logger.error({ err }, 'log writer failed');
      });
    this.next = next;
    this.chain = next;
    return next;
  }

  private async drain(): Promise<void> {
    if (this.taken) {
      this.metrics.logsRowsWritten.inc({ table: 'requests' }, this.taken);
      this.taken = 0;
    }
    while (this.waiting || this.audit.length) {
      const batch = this.take();
      await this.send(batch);
      // Written, spilled or dropped: its buffer is free (the store and the spill hold nothing past their promise).
      if (batch.kind === 'requests' && this.spare.length < 2) this.spare.push(batch.copy);
    }
    this.metrics.logsQueueRows.set({ table: 'requests' }, this.waiting);
    this.metrics.logsQueueRows.set({ table: 'audit' }, this.audit.length);
    // Down with nothing to send (traffic stopped during the outage): a ping says when the spill can be replayed.
    if (this.down && this.spill && Date.now() >= this.retryAt) await this.probe();
    if (this.replayDue && !this.down && this.spill) await this.replay();
    if (this.spill) this.metrics.logsSpillBytes.set(this.spill.pendingBytes);
  }

  private async probe(): Promise<void> {
    try {
      await this.store.ping();
      this.logger.warn('the log database answers again; replaying what was spilled');
      this.down = false;
      this.retryMs = RETRY_MS;
      this.replayDue = true;
    } catch {
      this.retryAt = Date.now() + this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
  }

  /** The next batch: audit rows first (few, and the ones that must not wait behind a flood of calls). */
  private take(): SpilledBatch {
    const id = randomUUID();
    if (this.audit.length) {
      const rows = this.audit.splice(0, this.options.batchRows);
      const keep = this.unexpired(
        'audit',
        rows.map((r) => r.time),
      );
      return { id, kind: 'audit', rows: keep ? rows.filter((_, i) => keep[i]) : rows };
    }
    let copy = this.batches.shift()!;
    const n = copy.count;
    this.waiting -= n;
    this.dequeued += n;
    let bodies: RequestBodies[] = [];
    if (this.kept.length) {
      const upTo = this.kept.findIndex((k) => k.at >= this.dequeued);
      const taken = this.kept.splice(0, upTo === -1 ? this.kept.length : upTo);
      bodies = taken.map((k) => k.bodies);
    }
    const keep = this.unexpired('requests', copy.times);
    if (keep) copy = copy.filter(keep);
    return { id, kind: 'requests', copy, bodies };
  }

  /**
   * Which rows of a batch are within the retention (their day is not gone, nor going), by their times: null when all
   * are; the others are counted as dropped.
   */
  private unexpired(table: 'requests' | 'audit', times: readonly number[]): boolean[] | null {
    const oldest = this.options.oldestKept(table);
    if (times.every((t) => t >= oldest)) return null;
    const keep = times.map((t) => t >= oldest);
    this.metrics.logsRowsDropped.inc({ table, reason: 'expired' }, keep.filter((k) => !k).length);
    return keep;
  }

  private async insert(batch: SpilledBatch): Promise<void> {
    if (batch.kind === 'audit') await this.store.insertAudit(batch.id, batch.rows);
    else await this.store.insertCopy(batch.id, batch.copy, batch.bodies);
  }

  private async send(batch: SpilledBatch): Promise<void> {
    if (batchRows(batch) === 0) return;
    if (!this.down || Date.now() >= this.retryAt) {
      try {
        await this.insert(batch);
        this.metrics.logsRowsWritten.inc({ table: batch.kind }, batchRows(batch));
        if (this.down) {
          this.logger.warn('the log database takes rows again; replaying what was spilled');
          this.down = false;
          this.retryMs = RETRY_MS;
          this.replayDue = true;
        }
        return;
      } catch (err) {
        if (refusedForGood(err)) return this.refused(batch, err);
        if (!this.down) this.logger.warn({ err }, 'the log database cannot take rows; spilling them to disk');
        this.down = true;
        this.retryAt = Date.now() + this.retryMs;
        this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
      }
    }
    await this.spillOut(batch);
  }

  /** A batch the database will never take: dropped and counted, logged with its error (never its rows). */
  private refused(batch: SpilledBatch, err: unknown): void {
    this.metrics.logsRowsDropped.inc({ table: batch.kind, reason: 'refused' }, batchRows(batch));
    this.logger.error({ err }, 'the log database refused a batch of rows; dropped');
  }

  private async spillOut(batch: SpilledBatch): Promise<void> {
    if (this.spill && (await this.spill.write(batch))) {
      this.metrics.logsRowsSpilled.inc({ table: batch.kind }, batchRows(batch));
      this.replayDue = true;
      return;
    }
    this.metrics.logsRowsDropped.inc({ table: batch.kind, reason: 'spill_full' }, batchRows(batch));
  }

  private async replay(): Promise<void> {
    if (!this.spill || !(await this.spill.any())) {
      this.replayDue = false;
      return;
    }
    try {
      const done = await this.spill.replay((batch) =>
        this.insert(batch).catch((err: unknown) => {
          if (!refusedForGood(err)) throw err;
          this.refused(batch, err);
        }),
      );
      this.replayDue = false;
      if (done.requests) this.metrics.logsRowsReplayed.inc({ table: 'requests' }, done.requests);
      if (done.audit) this.metrics.logsRowsReplayed.inc({ table: 'audit' }, done.audit);
      if (done.requests || done.audit) this.logger.info(done, 'spilled log rows replayed');
    } catch (err) {
      this.logger.warn({ err }, 'replaying spilled log rows failed; retrying later');
      this.down = true;
      this.retryAt = Date.now() + this.retryMs;
    }
  }

  /** Writes what waits (spilled when the store is away), then stops taking rows. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.closed = true;
  }
}
