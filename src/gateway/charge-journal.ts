import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '../observability/logger';
import type { Charge } from './charges';

/** A journal not rewritten for this long belongs to a process that is gone: any process may take it over. */
const STALE_MS = 10_000;

/**
 * This version's journals (`tabs-`: the lines of one reference add up) and those of versions that wrote one line per
 * charge (`charges-`: a reference's first line is the charge). A version that knows only `charges-` leaves `tabs-`
 * files alone, so a rolling deploy never reads a tab's first part as its whole.
 */
const JOURNAL = /^(tabs|charges)-(.+)-(\d+)-([0-9a-f]+)\.jsonl$/;

/**
 * Every journal a journal of this process named (its own, and those it claimed), whichever instance (replicas in one
 * process share a directory in tests): the files this process never claims. A file with this host and pid that is
 * not among them was left by an earlier process with the same pid.
 */
const MINE = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One JSON line per charge (or part of a tab's charge): the same fields as `Charge`. */
export const journalLine = (charge: Charge) => `${JSON.stringify(charge)}\n`;

/**
 * The file side of the gateway's charges in Redis mode (src/gateway/charges.ts decides what goes in it): a per-process
 * journal in `dir` of every charge this process served and the ledger has not confirmed, in the page cache, so it
 * survives the process. Lines are appended once per turn of the event loop for every response that ended in it
 * (one synchronous write per call was a tenth of a priced call's CPU on Redis); the caller holds each response's end
 * until `written()` settles. The lines of one reference add up (a tab's calls, each appended as it is served); the
 * file is rewritten every flush with one line per outstanding reference.
 *
 * A file no one rewrote for STALE_MS, or whose process on this host is gone, is claimed by another process (an atomic
 * rename decides who), copied into that process's journal and posted from there: a restarted replica, or any other
 * sharing the directory, charges what a killed one had served. The ledger takes a reference once, so a charge
 * claimed after it was posted is never taken twice.
 */
export class JournalFile {
  private readonly file: string;
  private readonly host: string;
  private fd: number;
  /** Lines waiting for this turn's append, and that append. */
  private queued = '';
  private appending: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    this.host = os.hostname().replace(/[^A-Za-z0-9.]/g, '_');
    this.file = this.ownName();
    this.fd = fs.openSync(this.file, 'a');
  }

  private ownName(): string {
    const name = `tabs-${this.host}-${process.pid}-${randomBytes(4).toString('hex')}.jsonl`;
    MINE.add(name);
    return path.join(this.dir, name);
  }

  /** Appends `lines` with the rest of this turn's, in one write; settles once they are in the file (never rejects). */
  append(lines: string): Promise<void> {
    this.queued += lines;
    this.appending ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        const lines = this.queued;
        this.queued = '';
        this.appending = undefined;
        if (!this.closed && lines) {
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

  /** Settles once every line appended so far is in the file; undefined when none is waiting. */
  written(): Promise<void> | undefined {
    return this.appending;
  }

  /**
   * Replaces the journal by `lines` (synchronous: no append can interleave), which must cover everything appended
   * so far: lines still waiting for this turn's append are dropped, as `lines` holds their amounts.
   */
  rewrite(lines: string): void {
    const next = `${this.file}.next`;
    fs.writeFileSync(next, lines);
    fs.renameSync(next, this.file);
    this.queued = '';
    fs.closeSync(this.fd);
    this.fd = fs.openSync(this.file, 'a');
  }

  /**
   * Claims the journals of processes that are gone and returns their charges (summed by reference), already written
   * into this journal; `known` references are this process's own and are left out.
   */
  claimOrphans(known: (reference: string) => boolean): Charge[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    const own = path.basename(this.file);
    const claimedCharges: Charge[] = [];
    for (const name of names) {
      const m = name.match(JOURNAL);
      if (!m || name === own || MINE.has(name)) continue;
      const file = path.join(this.dir, name);
      try {
        // This host's pid and not a journal of this process: an earlier process with the same pid, gone (a container
        // restarted: node is pid 1 again, under the same host name).
        const pid = Number(m[3]);
        const gone = m[2] === this.host && (pid === process.pid || !alive(pid));
        if (!gone && Date.now() - fs.statSync(file).mtimeMs < STALE_MS) continue;
        // Renamed as one of this process's journals: only one process wins (the others get ENOENT), and should this
        // one die before adopting it, the file is claimable again.
        const claimed = this.ownName();
        fs.renameSync(file, claimed);
        claimedCharges.push(...this.adopt(claimed, m[1] === 'tabs', known));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          this.logger.error({ err, file: name }, 'taking over a charge journal failed');
        }
      }
    }
    return claimedCharges;
  }

  /** Moves a claimed journal's charges into this one (written here before the claimed file goes). */
  private adopt(claimed: string, parts: boolean, known: (reference: string) => boolean): Charge[] {
    const found = new Map<string, Charge>();
    for (const line of fs.readFileSync(claimed, 'utf8').split('\n')) {
      if (!line) continue;
      let c: Charge;
      try {
        c = JSON.parse(line) as Charge;
      } catch {
        continue; // a line cut short by the crash: the process died inside the write, before its response ended
      }
      if (known(c.reference)) continue;
      const seen = found.get(c.reference);
      if (!seen) found.set(c.reference, { ...c });
      else if (parts) seen.micros += c.micros;
    }
    const charges = [...found.values()];
    if (charges.length) fs.writeSync(this.fd, charges.map(journalLine).join(''));
    fs.unlinkSync(claimed);
    if (charges.length)
      this.logger.info({ charges: charges.length }, 'took over charges journaled by a stopped process');
    return charges;
  }

  /** Closes the file: kept with `lines` (what is still outstanding) for the next process, or removed when empty. */
  close(lines: string): void {
    this.rewrite(lines);
    this.closed = true;
    fs.closeSync(this.fd);
    if (lines) return;
    fs.rmSync(this.file, { force: true });
    try {
      fs.rmdirSync(this.dir); // when no other process's journal is in it
    } catch {
      // another process's journal is still there
    }
  }
}
