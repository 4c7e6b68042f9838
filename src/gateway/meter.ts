import type { UsageDelta } from '../accounts/usage';
import { AT, dayOf, emptyRow } from '../accounts/usage';
import { systemClock, type Clock } from '../clock';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { ModelUsage, TokenUsage, UsageStore } from './store';
import { emptyUsage } from './store';

/** What one (key, model, day) has used since its last store write; `vendor` only labels the token counters. */
interface Pending {
  accountId: string;
  keyId: string;
  model: string;
  /** A time in the UTC day the calls were made (their day's usage rows). */
  at: number;
  /** That day, as `dayOf` names it. */
  day: string;
  vendor: string;
  /** Not yet in the store. */
  totals: ModelUsage;
  /** Not yet in the token counters (less than `totals` after a failed write was put back). */
  uncounted: ModelUsage;
}

const TOKEN_TYPES = [
  ['input', 'input'],
  ['output', 'output'],
  ['cacheRead', 'cache_read'],
  ['cacheWrite', 'cache_write'],
  ['reasoning', 'reasoning'],
] as const;

function addInto(totals: ModelUsage, more: TokenUsage, requests: number): void {
  totals.requests += requests;
  totals.input += more.input;
  totals.output += more.output;
  totals.cacheRead += more.cacheRead;
  totals.cacheWrite += more.cacheWrite;
  totals.reasoning += more.reasoning;
}

/**
 * Gateway token usage, summed in process and written out at most every `flushMs`: one store write (one Redis
 * round trip) per key and model per interval instead of one per call, and the token counters updated in the same
 * pass. A flush that fails puts its sums back for the next one; `close()` writes what is left. A crash loses at
 * most one interval of counts (money is not metered here: priced calls are charged per call, see the router).
 */
export class UsageMeter {
  private pending = new Map<string, Pending>();
  /**
   * The pending entry each key added to last: a key's calls mostly repeat one model, and this finds its entry without
   * building and hashing the entry's id on every call. Only entries of `pending`.
   */
  private latest = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: UsageStore,
    /** Adds requests and tokens to the account's usage rollups (reports and the console's charts). */
    private readonly rollup: (delta: UsageDelta) => Promise<void>,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly flushMs: number,
    /**
     * Models whose names label the token counters: the priced ones. Clients choose model names, so any other name
     * is counted under `other`, or every random name would be a new series on /metrics.
     */
    private readonly labelled: ReadonlySet<string> = new Set(),
    /** Dates each call's usage (its day's rows), as the ledger, budgets and charges date theirs. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** One call's usage (or, with `requests`, several calls' summed usage: a batch's results). */
  add(
    vendor: string,
    caller: { keyId: string; accountId: string },
    model: string,
    usage: TokenUsage,
    requests = 1,
  ): void {
    const now = this.clock.now();
    // dayOf answers today from its one-day cache: no Date or ISO string per call.
    const entry = this.entry(vendor, caller.accountId, caller.keyId, model, dayOf(now), now);
    addInto(entry.totals, usage, requests);
    addInto(entry.uncounted, usage, requests);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  private entry(
    vendor: string,
    accountId: string,
    keyId: string,
    model: string,
    day: string,
    at: number,
  ): Pending {
    const last = this.latest.get(keyId);
    if (last && last.model === model && last.day === day && last.vendor === vendor) return last;
    const id = `${keyId}\u0000${model}\u0000${vendor}\u0000${day}`;
    let entry = this.pending.get(id);
    if (!entry)
      this.pending.set(
        id,
        (entry = {
          accountId,
          keyId,
          model,
          at,
          day,
          vendor,
          totals: emptyUsage(),
          uncounted: emptyUsage(),
        }),
      );
    this.latest.set(keyId, entry);
    return entry;
  }

  /** Writes every pending sum; resolves once they are stored (or put back after a failure). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    if (batch.size === 0) return this.flushing;
    this.pending = new Map();
    this.latest = new Map();
    for (const { vendor, model: named, uncounted } of batch.values()) {
      const model = this.labelled.has(named) ? named : 'other';
      for (const [field, type] of TOKEN_TYPES) {
        if (uncounted[field]) this.metrics.gatewayTokens.inc({ vendor, model, type }, uncounted[field]);
      }
    }
    // Flushes run one after another, so a put-back never races a later write of the same pair.
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  private async write(batch: Map<string, Pending>): Promise<void> {
    const failed: Pending[] = [];
    let error: unknown;
    await Promise.all(
      [...batch.values()].map((p) =>
        Promise.all([
          this.store.add(p.keyId, p.model, p.totals),
          this.rollup({
            accountId: p.accountId,
            keyId: p.keyId,
            model: p.model,
            at: p.at,
            counts: rollupCounts(p.totals),
          }),
        ]).catch((err: unknown) => {
          failed.push(p);
          error = err;
        }),
      ),
    );
    if (failed.length === 0) return;
    // One line per flush, not per key: an outage would otherwise log every active key ten times a second.
    this.logger.error(
      { err: error, pending: failed.length },
      'writing gateway usage failed; retrying at the next flush',
    );
    // Back in line for the next flush; the counters already have their tokens.
    for (const p of failed)
      addInto(
        this.entry(p.vendor, p.accountId, p.keyId, p.model, dayOf(p.at), p.at).totals,
        p.totals,
        p.totals.requests,
      );
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Final flush on shutdown, before the store closes. */
  async close(): Promise<void> {
    await this.flush();
  }
}

/** A (key, model) sum as the rollups count it: gateway requests and tokens (spend comes with the charges). */
function rollupCounts(u: ModelUsage): number[] {
  const row = emptyRow();
  row[AT.gatewayRequests] = u.requests;
  row[AT.inputTokens] = u.input;
  row[AT.outputTokens] = u.output;
  row[AT.cachedTokens] = u.cacheRead;
  row[AT.cacheWriteTokens] = u.cacheWrite;
  row[AT.reasoningTokens] = u.reasoning;
  return row;
}
