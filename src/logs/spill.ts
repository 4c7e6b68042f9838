import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { CopyRows, rowOfValues } from './copy-rows';
import type { AuditRow, RequestBodies, RequestLogRow } from './types';

/**
 * One batch of the writer: its id travels with it, so a replay is idempotent. Request rows are their COPY tuples
 * (./copy-rows.ts), with their times.
 */
export type SpilledBatch =
  | { id: string; kind: 'requests'; copy: CopyRows; bodies: RequestBodies[] }
  | { id: string; kind: 'audit'; rows: AuditRow[] };

export const batchRows = (batch: SpilledBatch): number =>
  batch.kind === 'audit' ? batch.rows.length : batch.copy.count;

/** A batch as one line of a spill file: request rows as their tuples' bytes in base64. */
function spillLine(batch: SpilledBatch): string {
  if (batch.kind === 'audit') return `${JSON.stringify(batch)}\n`;
  const { id, bodies, copy } = batch;
  return `{"id":${JSON.stringify(id)},"kind":"requests","bodies":${JSON.stringify(bodies)},"tuples":"${copy.tuples().toString('base64')}"}\n`;
}

/**
 * A spill file's line as a batch. Request rows come as COPY tuples; an earlier version's files hold them as value
 * arrays in the insert's column order (the same as the tuples'), or as objects.
 */
function batchOfLine(line: string): SpilledBatch {
  const read = JSON.parse(line) as
    | {
        id: string;
        kind: 'requests';
        tuples?: string;
        values?: unknown[][];
        rows?: RequestLogRow[];
        bodies: RequestBodies[];
      }
    | { id: string; kind: 'audit'; rows: AuditRow[] };
  if (read.kind === 'audit') return read;
  const copy =
    read.tuples !== undefined
      ? CopyRows.ofTuples(Buffer.from(read.tuples, 'base64'))
      : CopyRows.ofRows(read.values ? read.values.map(rowOfValues) : (read.rows ?? []));
  return { id: read.id, kind: 'requests', copy, bodies: read.bodies ?? [] };
}

/** A spill file untouched this long belongs to no live process (its writer died): any process may replay it. */
const ORPHAN_MS = 30_000;

/**
 * Rows the database cannot take now, one batch per JSON line in files of this process
 * (`spill-<host>-<pid>-<random>.jsonl` under `dir`), replayed batch by batch when it answers again. A process also
 * takes over the files a dead one left (untouched for 30 s), claiming each by an atomic rename.
 */
export class LogSpill {
  private readonly tag = `${hostname().replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private seq = 0;
  private current: string | undefined;
  /** Bytes in this process's files not yet replayed. */
  private bytes = 0;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  get pendingBytes(): number {
    return this.bytes;
  }

  /** Appends a batch; false when the cap is reached or the disk refuses (the caller counts the rows dropped). */
  async write(batch: SpilledBatch): Promise<boolean> {
    const line = spillLine(batch);
    if (this.bytes + line.length > this.maxBytes) return false;
    try {
      await fs.mkdir(this.dir, { recursive: true });
      this.current ??= path.join(this.dir, `spill-${this.tag}-${++this.seq}.jsonl`);
      await fs.appendFile(this.current, line);
      this.bytes += line.length;
      return true;
    } catch {
      return false;
    }
  }

  /** Whether there is anything to replay: this process's files, or another's it may take over. */
  async any(): Promise<boolean> {
    if (this.bytes > 0) return true;
    return (await this.claimable()).length > 0;
  }

  private async claimable(): Promise<string[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch {
      return [];
    }
    const now = Date.now();
    const out: string[] = [];
    for (const name of names.sort()) {
      if (!name.endsWith('.jsonl')) continue;
      const full = path.join(this.dir, name);
      if (name.startsWith(`spill-${this.tag}-`) || name.startsWith(`replay-${this.tag}-`)) {
        out.push(full);
        continue;
      }
      // Another process's: only once it is plainly gone (its file untouched), or a replay it abandoned.
      const stat = await fs.stat(full).catch(() => undefined);
      if (stat && now - stat.mtimeMs > ORPHAN_MS) out.push(full);
    }
    return out;
  }

  /**
   * Hands every spilled batch to `insert` in file order, deleting each file once all its batches went in. Stops at
   * the first failure (the rest waits for the next replay; batches already in are skipped then by their ids).
   * Returns the rows replayed.
   */
  async replay(insert: (batch: SpilledBatch) => Promise<void>): Promise<{ requests: number; audit: number }> {
    const done = { requests: 0, audit: 0 };
    // New batches go to a new file from now on: the ones being replayed are not appended to meanwhile.
    this.current = undefined;
    for (const file of await this.claimable()) {
      const mine = path.basename(file).startsWith(`replay-${this.tag}-`);
      const claimed = mine ? file : path.join(this.dir, `replay-${this.tag}-${path.basename(file)}`);
      if (!mine) {
        try {
          await fs.rename(file, claimed);
        } catch {
          continue; // another process claimed it first
        }
      }
      const size = (await fs.stat(claimed).catch(() => undefined))?.size ?? 0;
      const lines = createInterface({ input: createReadStream(claimed, 'utf8'), crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line.trim()) continue;
          let batch: SpilledBatch;
          try {
            batch = batchOfLine(line);
          } catch {
            continue; // a line cut by a crash mid-write: nothing of it can be read
          }
          await insert(batch);
          done[batch.kind] += batchRows(batch);
        }
      } finally {
        lines.close();
      }
      await fs.unlink(claimed).catch(() => undefined);
      if (path.basename(file).startsWith(`spill-${this.tag}-`) || mine)
        this.bytes = Math.max(0, this.bytes - size);
    }
    return done;
  }
}
