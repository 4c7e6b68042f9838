import { randomUUID } from 'node:crypto';
import type { Owed } from '../accounts/budgets';
import { dayOf } from '../accounts/usage';
import { withinGrace, type Clock } from '../clock';
import { ApiError } from '../errors';
import type { Logger } from '../observability/logger';
import { JournalFile, journalLine } from './charge-journal';

/** A price to take from an account's balance once: a tab of calls, or one charge with its own reference. */
export interface Charge {
  accountId: string;
  micros: number;
  /** The ledger reference: posting it twice takes the money once. */
  reference: string;
  /** Whose calls they were, for the usage rollups and budgets (absent in journals written before they existed). */
  keyId?: string;
  model?: string;
  /** When the first of its calls was served: the day its spend counts in (absent: when it is posted). */
  at?: number;
}

/**
 * Posts a charge to the ledger: resolves when it is there (or the balance was already empty), throws ApiError when it
 * never can be (unknown account). Calls `applied` as the store applies it, before anyone hears of the new balance.
 */
export type PostCharge = (charge: Charge, applied: () => void) => Promise<unknown>;

/** One (key, model, day)'s calls since the last flush: posted as one charge. */
interface Tab {
  charge: Charge;
  /** Its journal line up to the amount: each call appends the line with its own price, and the lines add up. */
  line: string;
}

/** What one account owes: its open tabs, and every micro-dollar served and not yet confirmed by the ledger. */
interface Owing {
  micros: number;
  tabs: Map<string, Tab>;
}

export interface ChargesOptions {
  post: PostCharge;
  logger: Logger;
  /** Dates each tab (its day and its charge's `at`), as the ledger and budgets date everything else. */
  clock: Clock;
  /** How often open tabs are closed and posted, failed postings retried, and the journal rewritten. */
  flushMs: number;
  /** Redis mode: where each process journals what it served until the ledger has it (charge-journal.ts). */
  journalDir?: string;
  /** Set to what is still owed (USD) after each flush's postings: an alert on a store that stopped taking charges. */
  owedGauge?: { set(usd: number): void };
}

/**
 * Gateway charges, posted as tabs: every priced call served adds its price to its (key, model, day)'s open tab, and
 * every `flushMs` each open tab is closed and posted as one ledger charge (the whole price, or what the balance
 * holds). One posting per key and model per interval instead of one per call: the ledger, its references and the
 * store's work grow with the keys in use, not with the calls (at 100 priced calls a second, one entry per call was
 * about 7 GB a day).
 *
 * What is served and not yet confirmed is owed: the balance and budget guards count it as spent, so the call that
 * empties a balance or crosses a budget refuses the next one on this replica at once, as a posting per call did.
 * Reads of an account's balance, budgets, ledger or usage through this replica settle its tabs first (`settle`).
 *
 * Redis mode: every call's price is journaled (JournalFile) under its tab's reference before the client's response
 * ends (`written()`), and a tab is posted only once its lines are in the journal, so a crash or a Redis outage loses
 * nothing: a charge the store did not take stays outstanding, journaled, and is posted again at every flush; the
 * ledger takes a reference once, so a charge whose reply was lost is never taken twice, and a journal claimed after
 * a crash adds up to what was posted under each reference. Embedded mode has no journal (its ledger is the process).
 */
export class GatewayCharges implements Owed {
  private readonly owing = new Map<string, Owing>();
  private readonly byKeyId = new Map<string, number>();
  /** Closed tabs and own-reference charges not yet confirmed, by reference. */
  private readonly outstanding = new Map<string, Charge>();
  /** Posts in flight, by reference. */
  private readonly posting = new Map<string, Promise<void>>();
  private readonly file: JournalFile | undefined;
  private readonly timer: NodeJS.Timeout;
  private failing = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: ChargesOptions) {
    this.file = options.journalDir ? new JournalFile(options.journalDir, options.logger) : undefined;
    this.adopt();
    this.timer = setInterval(() => void this.flush(), options.flushMs).unref();
  }

  /** One served call's price: added to its tab, and (Redis mode) to this turn's journal append. */
  add(accountId: string, keyId: string, model: string, micros: number): void {
    if (micros <= 0) return;
    const now = this.options.clock.now();
    const owing = this.owe(accountId, keyId, micros);
    // dayOf answers today from its one-day cache: no Date or ISO string per call.
    const id = `${keyId}\u0000${model}\u0000${dayOf(now)}`;
    let tab = owing.tabs.get(id);
    if (!tab) {
      const charge = { accountId, micros: 0, reference: `llm:${randomUUID()}`, keyId, model, at: now };
      const { micros: _, ...named } = charge;
      tab = { charge, line: `${JSON.stringify(named).slice(0, -1)},"micros":` };
      owing.tabs.set(id, tab);
    }
    tab.charge.micros += micros;
    void this.file?.append(`${tab.line}${micros}}\n`);
  }

  /**
   * A charge with its own reference (an LLM batch's results, billed once however often they are read): journaled,
   * then posted at once; resolves when posted or left for the retries (never rejects).
   */
  once(charge: Charge): Promise<void> {
    const ref = charge.reference;
    if (this.outstanding.has(ref)) return this.posting.get(ref) ?? Promise.resolve();
    this.owe(charge.accountId, charge.keyId, charge.micros);
    this.outstanding.set(ref, charge);
    return Promise.resolve(this.file?.append(journalLine(charge))).then(() => this.attempt(charge));
  }

  /** Settles once every price added so far is in the journal; undefined when none is waiting (or embedded). */
  written(): Promise<void> | undefined {
    return this.file?.written();
  }

  byAccount(accountId: string): number {
    return this.owing.get(accountId)?.micros ?? 0;
  }

  byKey(keyId: string): number {
    return this.byKeyId.get(keyId) ?? 0;
  }

  /** Served and not yet confirmed, in micro-dollars: what a crash would leave to the journal. */
  get pending(): number {
    let micros = 0;
    for (const owing of this.owing.values()) micros += owing.micros;
    return micros;
  }

  /**
   * Posts what the account (or, without one, every account) owes here, and resolves once the ledger has it or the
   * posting failed (then it stays outstanding): a balance, budget or usage read after it sees this replica's calls.
   */
  async settle(accountId?: string): Promise<void> {
    if (accountId !== undefined && !this.owing.has(accountId)) return;
    for (const [id, owing] of this.owing)
      if (accountId === undefined || id === accountId) this.closeTabs(owing);
    await this.file?.written(); // a tab is posted once its lines are in the journal
    const posts: Promise<void>[] = [];
    for (const charge of this.outstanding.values())
      if (accountId === undefined || charge.accountId === accountId) posts.push(this.attempt(charge));
    await Promise.all(posts);
  }

  /**
   * Every interval: closes every open tab, rewrites the journal with what is outstanding (which also marks it alive),
   * takes over journals of processes that are gone, and posts whatever is outstanding.
   */
  flush(): Promise<void> {
    for (const owing of this.owing.values()) this.closeTabs(owing);
    if (this.file) {
      try {
        this.file.rewrite([...this.outstanding.values()].map(journalLine).join(''));
      } catch (err) {
        // The appended lines are still in the file; the next flush tries again.
        this.options.logger.error({ err }, 'rewriting the charge journal failed');
      }
      this.adopt();
    }
    return Promise.all([...this.outstanding.values()].map((c) => this.attempt(c))).then(() => {
      this.options.owedGauge?.set(this.pending / 1e6);
    });
  }

  private closeTabs(owing: Owing): void {
    for (const tab of owing.tabs.values()) this.outstanding.set(tab.charge.reference, tab.charge);
    owing.tabs.clear();
  }

  private adopt(): void {
    if (!this.file) return;
    for (const charge of this.file.claimOrphans((ref) => this.outstanding.has(ref))) {
      this.owe(charge.accountId, charge.keyId, charge.micros);
      this.outstanding.set(charge.reference, charge);
    }
  }

  /** Counts `micros` as owed by the account (and its key); returns the account's entry. */
  private owe(accountId: string, keyId: string | undefined, micros: number): Owing {
    let owing = this.owing.get(accountId);
    if (!owing) this.owing.set(accountId, (owing = { micros: 0, tabs: new Map() }));
    owing.micros += micros;
    if (keyId !== undefined) this.byKeyId.set(keyId, (this.byKeyId.get(keyId) ?? 0) + micros);
    return owing;
  }

  /** The ledger has it (or refused it for good): it is no longer owed here. */
  private paid(charge: Charge): void {
    this.outstanding.delete(charge.reference);
    const owing = this.owing.get(charge.accountId);
    if (owing) {
      owing.micros -= charge.micros;
      if (owing.micros <= 0 && owing.tabs.size === 0) this.owing.delete(charge.accountId);
    }
    if (charge.keyId !== undefined) {
      const left = (this.byKeyId.get(charge.keyId) ?? 0) - charge.micros;
      if (left > 0) this.byKeyId.set(charge.keyId, left);
      else this.byKeyId.delete(charge.keyId);
    }
  }

  /** Posts an outstanding charge, one post at a time per reference. */
  private attempt(charge: Charge): Promise<void> {
    const inFlight = this.posting.get(charge.reference);
    if (inFlight) return inFlight;
    if (!this.outstanding.has(charge.reference)) return Promise.resolve();
    const posted = this.postOnce(charge).finally(() => this.posting.delete(charge.reference));
    this.posting.set(charge.reference, posted);
    return posted;
  }

  private async postOnce(charge: Charge): Promise<void> {
    const { logger } = this.options;
    // Paid as the store applies it (the balance and budgets this replica sees then include it), else once answered.
    let paid = false;
    const pay = () => {
      if (!paid) this.paid(charge);
      paid = true;
    };
    try {
      await this.options.post(charge, pay);
      pay();
      if (this.failing) {
        this.failing = false;
        logger.info({ pending: this.outstanding.size }, 'gateway charges are being posted again');
      }
    } catch (err) {
      if (err instanceof ApiError) {
        // The store answered and refused for good (the account is gone): nothing will ever take it.
        pay();
        logger.error({ err, reference: charge.reference }, 'gateway charge refused by the ledger; dropped');
      } else if (!this.failing) {
        // One line per outage, not per charge.
        this.failing = true;
        logger.error(
          { err, pending: this.outstanding.size },
          'posting gateway charges failed; kept and retried',
        );
      }
    }
  }

  /**
   * Stops the flushes, posts every open tab and waits up to `graceMs` for the postings, then leaves what is
   * outstanding in the journal for the next process (or removes the file when nothing is).
   */
  close(graceMs = 2_000): Promise<void> {
    return (this.closing ??= this.shut(graceMs));
  }

  private async shut(graceMs: number): Promise<void> {
    clearInterval(this.timer);
    for (const owing of this.owing.values()) this.closeTabs(owing);
    await this.file?.written();
    await withinGrace(
      Promise.allSettled([...this.outstanding.values()].map((c) => this.attempt(c))),
      graceMs,
    );
    const left = [...this.outstanding.values()];
    this.file?.close(left.map(journalLine).join(''));
    if (left.length)
      this.options.logger.warn(
        { pending: left.length },
        this.file ? 'gateway charges left in the journal for the next start' : 'gateway charges not posted',
      );
  }
}
