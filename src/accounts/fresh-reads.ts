import type { Clock } from '../clock';

interface Entry<T> {
  readAt: number;
  value: T | undefined;
  loading?: Promise<T>;
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

  /** The value last read, or undefined when there is none yet; a stale one starts a read in the background. */
  peek(accountId: string): T | undefined {
    const entry = this.known.get(accountId);
    if (entry === undefined) return undefined;
    if (this.clock.now() - entry.readAt >= this.freshMs && !entry.loading)
      void this.read(accountId).catch(() => {});
    return entry.value;
  }

  /** Reads the store now (joining a read under way). */
  read(accountId: string): Promise<T> {
    let entry = this.known.get(accountId);
    if (!entry) {
      if (this.known.size >= this.max) this.known.clear();
      entry = { readAt: -Infinity, value: undefined };
      this.known.set(accountId, entry);
    }
    const target = entry;
    if (target.loading) return target.loading;
    const startedAt = this.clock.now();
    target.loading = this.load(accountId, startedAt)
      .then((value) => {
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
    if (entry) entry.value = value;
    else {
      if (this.known.size >= this.max) this.known.clear();
      this.known.set(accountId, { readAt: this.clock.now(), value });
    }
  }

  forget(accountId: string): void {
    this.known.delete(accountId);
  }
}
