import type { Clock } from '../clock';

interface Entry<T> {
  readAt: number;
  value: T | undefined;
  loading?: Promise<T>;
  /** Counts this replica's changes without a read (set, changed): a read begun before one is older than the value. */
  changes: number;
}

/**
 * Per-account values this replica read from the store, for checks at the start of a gateway call without a store
 * round trip per call: a value older than `freshMs` is still answered, and read again in the background (one read
 * at a time per account). Bounded: past `max` accounts the whole map starts over.
 */
export class FreshReads<T> {
  private readonly known = new Map<string, Entry<T>>();

  constructor(
    private readonly load: (accountId: string, now: number) => Promise<T>,
    private readonly clock: Clock,
    readonly freshMs: number,
    private readonly max = 10_000,
  ) {}

  /**
   * The value last read, or undefined when there is none yet; a stale one starts a read in the background. `now`:
   * the caller's reading of the clock, when it has one.
   */
  peek(accountId: string, now = this.clock.now()): T | undefined {
    const entry = this.known.get(accountId);
    if (entry === undefined) return undefined;
    if (now - entry.readAt >= this.freshMs && !entry.loading) void this.read(accountId).catch(() => {});
    return entry.value;
  }

  /** Reads the store now (joining a read under way). */
  read(accountId: string): Promise<T> {
    let entry = this.known.get(accountId);
    if (!entry) {
      if (this.known.size >= this.max) this.known.clear();
      entry = { readAt: -Infinity, value: undefined, changes: 0 };
      this.known.set(accountId, entry);
    }
    const target = entry;
    if (target.loading) return target.loading;
    const startedAt = this.clock.now();
    const changes = target.changes;
    target.loading = this.load(accountId, startedAt)
      .then((value) => {
        // A posting of this replica that landed while the read was under way may be missing from what it read: the
        // value this replica moved stays, and the next call reads again.
        if (target.changes !== changes) return target.value ?? value;
        target.value = value;
        target.readAt = startedAt;
        return value;
      })
      .finally(() => (target.loading = undefined));
    return target.loading;
  }

  /** What this replica learnt without a read (its own posting): it holds until the next read. */
  set(accountId: string, value: T): void {
    const entry = this.known.get(accountId);
    if (entry) {
      entry.value = value;
      entry.changes++;
    } else {
      if (this.known.size >= this.max) this.known.clear();
      this.known.set(accountId, { readAt: this.clock.now(), value, changes: 1 });
    }
  }

  /** The value last read, after this replica changed it in place (a read under way then must not replace it). */
  changed(accountId: string): T | undefined {
    const entry = this.known.get(accountId);
    if (entry === undefined) return undefined;
    entry.changes++;
    return entry.value;
  }

  forget(accountId: string): void {
    this.known.delete(accountId);
  }
}
