import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { withinGrace } from '../clock';
import { ApiError } from '../errors';
import type { Logger } from '../observability/logger';

/** One served call's price, to be taken from its account's balance once. */
export interface Charge {
  accountId: string;
  micros: number;
  /** The ledger reference: posting it twice takes the money once. */
  reference: string;
  /** Whose call it was, for the usage rollups and budgets (absent in journals written before they existed). */
  keyId?: string;
  model?: string;
}

/** Posts a charge to the ledger: resolves when it is there, throws ApiError when it never can be (unknown account). */
export type PostCharge = (charge: Charge) => Promise<unknown>;

/** How often outstanding charges are retried and the journal rewritten with only them (which also marks it alive). */
const MAINTAIN_MS = 1_000;
/** A journal not rewritten for this long belongs to a process that is gone: any process may take it over. */
const STALE_MS = 10_000;

const OWN = /^charges-(.+)-(\d+)-([0-9a-f]+)\.jsonl$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Gateway charges that outlive a store outage and a process crash (Redis mode). Each priced call's charge is written
 * to a local journal (one synchronous append per turn of the event loop for all the calls that ended in it: in the
 * page cache, so it survives the process) before its response ends and before it is posted;
 * a charge the store did not take stays in memory and in the journal and is posted again every second until it is
 * in. The ledger is idempotent by reference, so a charge whose reply was lost is never taken twice.
 *
 * Each process writes its own file in `dir` and rewrites it every second with only the charges still outstanding.
 * A file no one rewrote for STALE_MS, or whose process on this host is gone, is claimed by another process (an atomic
 * rename decides who), copied into that process's journal and posted from there: a restarted replica, or any other
 * sharing the directory, charges what a killed one had served.
 */
export class ChargeJournal {
  private readonly file: string;
  private fd: number;
  /** Written ahead, not yet confirmed by the store. */
  private readonly outstanding = new Map<string, Charge>();
  /** Posts in flight, by reference. */
  private readonly posting = new Map<string, Promise<void>>();
  private readonly timer: NodeJS.Timeout;
  private failing = false;
  /** Charges waiting for this turn's append, and that append. */
  private queued: Charge[] = [];
  private appending: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly post: PostCharge,
    private readonly logger: Logger,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    const host = os.hostname().replace(/[^A-Za-z0-9.]/g, '_');
    this.file = path.join(dir, `charges-${host}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`);
    this.fd = fs.openSync(this.file, 'a');
    this.claimOrphans();
    this.timer = setInterval(() => this.maintain(), MAINTAIN_MS).unref();
  }

  /**
   * Journals the charge, then posts it; resolves when posted or left for the retries (never rejects). The line is
   * appended with the charges of every other response that ended in this turn of the event loop, in one write
   * (one synchronous write per call was a tenth of a priced call's CPU on Redis): the caller holds its response's
   * end until `written()` settles, so no response ends before its charge is in the journal.
   */
  charge(charge: Charge): Promise<void> {
    this.outstanding.set(charge.reference, charge);
    this.queued.push(charge);
    return this.append().then(() => {
      // maintain() may have posted it meanwhile (it retries whatever is outstanding): one post at a time.
      const inFlight = this.posting.get(charge.reference);
      if (inFlight) return inFlight;
      return this.outstanding.has(charge.reference) ? this.attempt(charge) : undefined;
    });
  }

  /** Settles once every charge taken so far is in the journal; undefined when none is waiting. */
  written(): Promise<void> | undefined {
    return this.appending;
  }

  /** The one append of this turn of the event loop (a failed write leaves the charges to the next rewrite). */
  private append(): Promise<void> {
    this.appending ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        const lines = this.queued.map((c) => `${JSON.stringify(c)}\n`).join('');
        this.queued = [];
        this.appending = undefined;
        if (!this.closed) {
          try {
            fs.writeSync(this.fd, lines);
          } catch (err) {
            this.logger.error({ err }, 'appending to the charge journal failed; the next rewrite keeps them');
          }
        }
        resolve();
      }),
    );
    return this.appending;
  }

  /** Charges journaled and not yet confirmed. */
  get pending(): number {
    return this.outstanding.size;
  }

  private attempt(charge: Charge): Promise<void> {
    const posted = this.postOnce(charge).finally(() => this.posting.delete(charge.reference));
    this.posting.set(charge.reference, posted);
    return posted;
  }

  private async postOnce(charge: Charge): Promise<void> {
    try {
      await this.post(charge);
      this.outstanding.delete(charge.reference);
      if (this.failing) {
        this.failing = false;
        this.logger.info({ pending: this.outstanding.size }, 'gateway charges are being posted again');
      }
    } catch (err) {
      if (err instanceof ApiError) {
        // The store answered and refused for good (the account is gone): nothing will ever take it.
        this.outstanding.delete(charge.reference);
        this.logger.error(
          { err, reference: charge.reference },
          'gateway charge refused by the ledger; dropped',
        );
      } else if (!this.failing) {
        // One line per outage, not per charge.
        this.failing = true;
        this.logger.error(
          { err, pending: this.outstanding.size },
          'posting gateway charges failed; kept and retried',
        );
      }
    }
  }

  /** Retries what is outstanding, rewrites the journal with it, and takes over journals of processes that are gone. */
  private maintain(): void {
    for (const charge of this.outstanding.values()) {
      if (!this.posting.has(charge.reference)) void this.attempt(charge);
    }
    this.rewrite();
    this.claimOrphans();
  }

  /** Replaces the journal by one holding only the outstanding charges (synchronous: no append can interleave). */
  private rewrite(): void {
    const next = `${this.file}.next`;
    fs.writeFileSync(next, [...this.outstanding.values()].map((c) => `${JSON.stringify(c)}\n`).join(''));
    fs.renameSync(next, this.file);
    fs.closeSync(this.fd);
    this.fd = fs.openSync(this.file, 'a');
  }

  private claimOrphans(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    const own = path.basename(this.file);
    const host = own.match(OWN)![1];
    for (const name of names) {
      const m = name.match(OWN);
      if (!m || name === own || Number(m[2]) === process.pid) continue;
      const file = path.join(this.dir, name);
      try {
        const gone = m[1] === host && !alive(Number(m[2]));
        if (!gone && Date.now() - fs.statSync(file).mtimeMs < STALE_MS) continue;
        // Renamed as one of this process's journals: only one process wins (the others get ENOENT), and should this
        // one die before adopting it, the file is claimable again.
        const claimed = path.join(
          this.dir,
          `charges-${host}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`,
        );
        fs.renameSync(file, claimed);
        this.adopt(claimed);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.logger.error({ err, file: name }, 'taking over a charge journal failed');
        }
      }
    }
  }

  /** Moves a claimed journal's charges into this one (written here before the claimed file goes), then posts them. */
  private adopt(claimed: string): void {
    const found = new Map<string, Charge>();
    for (const line of fs.readFileSync(claimed, 'utf8').split('\n')) {
      if (!line) continue;
      try {
        const c = JSON.parse(line) as Charge;
        if (!this.outstanding.has(c.reference)) found.set(c.reference, c);
      } catch {
        // A line cut short by the crash: the process died inside the write, before its response ended.
      }
    }
    const charges = [...found.values()];
    for (const c of charges) {
      fs.writeSync(this.fd, `${JSON.stringify(c)}\n`);
      this.outstanding.set(c.reference, c);
    }
    fs.unlinkSync(claimed);
    if (charges.length)
      this.logger.info({ charges: charges.length }, 'took over charges journaled by a stopped process');
    for (const c of charges) void this.attempt(c);
  }

  /**
   * Stops retrying: waits up to `graceMs` for charges being posted, then leaves what is outstanding in the journal for
   * the next process (or removes the file when nothing is).
   */
  async close(graceMs = 2_000): Promise<void> {
    clearInterval(this.timer);
    await this.appending;
    await withinGrace(Promise.allSettled(this.posting.values()), graceMs);
    this.closed = true;
    this.rewrite();
    fs.closeSync(this.fd);
    if (this.outstanding.size === 0) {
      fs.rmSync(this.file, { force: true });
      try {
        fs.rmdirSync(this.dir); // when no other process's journal is in it
      } catch {
        // another process's journal is still there
      }
    } else
      this.logger.warn(
        { pending: this.outstanding.size },
        'gateway charges left in the journal for the next start',
      );
  }
}
