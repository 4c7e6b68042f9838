import type { Clock } from '../clock';
import { FreshReads } from './fresh-reads';
import { ApiError } from '../errors';
import { microsToUsd, usdToMicros } from '../money';
import type { AuthContext } from './service';
import { budgetError } from './service';
import type { AccountStore } from './store';
import {
  accountScope,
  budgetCurrent,
  keyScope,
  stampOf,
  type BudgetEvent,
  type BudgetPeriod,
  type BudgetScope,
  type BudgetState,
} from './usage';

/** A budget as the API shows it. */
export interface BudgetView {
  scope: 'account' | 'key';
  keyId?: string;
  period: BudgetPeriod;
  limitUsd: number;
  softPercent: number | null;
  /**
   * The current period (`YYYY-MM-DD` or `YYYY-MM`, UTC; a window's start, ISO 8601) and what was spent in it; a
   * window also shows its end and whether it is open now.
   */
  periodStart: string;
  periodEnd?: string;
  active: boolean;
  spentUsd: number;
  remainingUsd: number;
  exceeded: boolean;
}

export function budgetView(state: BudgetState, now: number): BudgetView {
  const window = state.period === 'window';
  const current = budgetCurrent(state, now);
  // A calendar period begun since the spend was read has nothing spent yet; a window keeps its spend.
  const spent = current || window ? state.spentMicros : 0;
  return {
    scope: state.scope === accountScope ? 'account' : 'key',
    ...(state.scope === accountScope ? {} : { keyId: state.scope.slice(4) }),
    period: state.period,
    limitUsd: microsToUsd(state.limitMicros),
    softPercent: state.softPercent,
    periodStart: window ? new Date(state.startsAt!).toISOString() : stampOf(state.period as 'day', now),
    ...(window ? { periodEnd: new Date(state.endsAt!).toISOString() } : {}),
    active: window ? current : true,
    spentUsd: microsToUsd(spent),
    remainingUsd: microsToUsd(Math.max(0, state.limitMicros - spent)),
    // A window that is not open holds nothing back, whatever its limit.
    exceeded: (!window || current) && spent >= state.limitMicros,
  };
}

/**
 * What this replica's gateway has served and not yet seen posted (src/gateway/charges.ts): the guards count it as
 * spent, so a call that empties a balance or crosses a budget refuses the next one here at once.
 */
export interface Owed {
  byAccount(accountId: string): number;
  byKey(keyId: string): number;
}

const NOTHING_OWED: Owed = { byAccount: () => 0, byKey: () => 0 };

/**
 * The gateway's budget check at the start of a call, without a store round trip per call (Redis mode): each
 * replica holds every active account's budgets and period spend, read again in the background once they are older
 * than `freshMs`, and moved on at once by what its own postings report (a hard budget crossed) and by budgets set
 * through it. A call is refused once the spend in the current period reached the limit; a call's price is known only
 * when it has run, so calls already running finish (docs/decisions.md states the overshoot bound). In embedded mode
 * every posting and budget change happens in this process, so the view is exact for refusals; only a refund that
 * brings the spend back under a limit is seen at the next read. With `freshMs` 0 every check reads the store.
 *
 * The task API does not use this: a task's price is known up front, and the store's charge refuses a task that
 * would go over a budget atomically (ledger_post.lua, task_create.lua).
 */
export class BudgetGuard {
  private readonly reads: FreshReads<BudgetState[]>;

  constructor(
    store: Pick<AccountStore, 'budgetStates'>,
    private readonly clock: Clock,
    freshMs: number,
    private readonly owed: Owed = NOTHING_OWED,
  ) {
    this.reads = new FreshReads((accountId, now) => store.budgetStates(accountId, now), clock, freshMs);
  }

  /** Throws 402 when a hard budget of the key or its account is spent; a promise only when it must read first. */
  check(auth: AuthContext): Promise<void> | undefined {
    const now = this.clock.now();
    const states = this.reads.freshMs === 0 ? undefined : this.reads.peek(auth.accountId, now);
    if (states === undefined) {
      return this.reads.read(auth.accountId).then((read) => this.assertWithin(auth, read, this.clock.now()));
    }
    this.assertWithin(auth, states, now);
    return undefined;
  }

  /**
   * A posting of this replica crossed a threshold: what it says of the spend holds at once here, and over a read
   * begun before it (which may not count the posting).
   */
  note(event: BudgetEvent): void {
    const state = this.reads.peek(event.accountId)?.find((s) => s.scope === event.scope);
    if (state && (state.stamp !== event.stamp || state.spentMicros < event.spentMicros)) {
      this.reads.changed(event.accountId);
      state.stamp = event.stamp;
      state.spentMicros = event.spentMicros;
    }
  }

  /**
   * A posting of this replica with this spend (a refund's is negative) was applied at `at`: the budgets it counts
   * against move at once, as the store moved them (a read under way keeps this view).
   */
  spent(accountId: string, keyId: string, micros: number, at: number): void {
    const states = this.reads.changed(accountId);
    if (!states) return;
    const mine = keyScope(keyId);
    for (const state of states) {
      if ((state.scope === accountScope || state.scope === mine) && budgetCurrent(state, at))
        state.spentMicros += micros;
    }
  }

  /** A budget of the account changed on this replica: read it again on its next call. */
  forget(accountId: string): void {
    this.reads.forget(accountId);
  }

  private assertWithin(auth: AuthContext, states: BudgetState[], now: number): void {
    if (!states.length) return;
    const mine = keyScope(auth.keyId);
    for (const state of states) {
      if (state.scope !== accountScope && state.scope !== mine) continue;
      if (!budgetCurrent(state, now)) continue; // a new period (nothing spent yet), or outside its window
      const owed =
        state.scope === accountScope ? this.owed.byAccount(auth.accountId) : this.owed.byKey(auth.keyId);
      if (state.spentMicros + owed >= state.limitMicros)
        throw budgetError(owed ? { ...state, spentMicros: state.spentMicros + owed } : state);
    }
  }
}

/**
 * The gateway's balance check (a call to a priced model needs a balance left; what it costs is known once it ran),
 * without a store round trip per call. A balance this replica last saw above what its gateway owes (served, not yet
 * posted) admits at once, and is read again in the background once older than `freshMs`; one it saw at or below
 * that, or never, is read before the call, so credits count at the next call. Every posting through this replica
 * (gateway charges, credits, refunds) moves its view at once; a balance drained elsewhere (another replica, a task
 * charged by the store) is seen within `freshMs`, and a call admitted meanwhile is charged what is left: nothing
 * (docs/decisions.md).
 */
export class BalanceGuard {
  private readonly reads: FreshReads<number>;

  constructor(
    store: Pick<AccountStore, 'balanceMicros'>,
    clock: Clock,
    freshMs: number,
    private readonly owed: Owed = NOTHING_OWED,
  ) {
    this.reads = new FreshReads(
      async (accountId) => (await store.balanceMicros(accountId)) ?? 0,
      clock,
      freshMs,
    );
  }

  /** Throws 402 when the account has no balance left; a promise only when it must read first. */
  check(accountId: string): Promise<void> | undefined {
    const known = this.reads.freshMs === 0 ? undefined : this.reads.peek(accountId);
    if (known !== undefined && known > this.owed.byAccount(accountId)) return undefined;
    return this.reads.read(accountId).then((micros) => {
      if (micros <= this.owed.byAccount(accountId)) {
        throw new ApiError(
          'insufficient_balance',
          'Insufficient balance: this account has no balance left for metered models',
        );
      }
    });
  }

  /** A posting of this replica left the account with this balance. */
  note(accountId: string, balanceMicros: number): void {
    this.reads.set(accountId, balanceMicros);
  }
}

/** PUT .../budget bodies, checked by the routes: limits in USD, a window's bounds in ms. */
export interface BudgetInput {
  period: BudgetPeriod;
  limitUsd: number;
  softPercent?: number;
  startsAt?: number;
  endsAt?: number;
}

/** The admin side of budgets: set, remove, read, for an account or one of its keys. */
export class Budgets {
  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly guard: BudgetGuard,
    /** Posts what this process's gateway owes the account, so a budget's spend counts this replica's calls. */
    private readonly settle: (accountId: string) => Promise<void> = () => Promise.resolve(),
  ) {}

  async set(accountId: string, scope: BudgetScope, input: BudgetInput): Promise<BudgetView> {
    if (input.softPercent !== undefined && input.softPercent >= 100)
      throw new ApiError('invalid_request', 'body.softPercent: must be below 100 (the hard limit is 100%)');
    const window = input.period === 'window';
    if (window && (input.startsAt === undefined || input.endsAt === undefined))
      throw new ApiError('invalid_request', 'body.startsAt: a window needs startsAt and endsAt');
    if (!window && (input.startsAt !== undefined || input.endsAt !== undefined))
      throw new ApiError('invalid_request', 'body.startsAt: only a window has startsAt and endsAt');
    if (window && input.endsAt! <= input.startsAt!)
      throw new ApiError('invalid_request', 'body.endsAt: must be after startsAt');
    await this.store.setBudget(accountId, scope, {
      period: input.period,
      limitMicros: usdToMicros(input.limitUsd),
      softPercent: input.softPercent ?? null,
      ...(window ? { startsAt: input.startsAt, endsAt: input.endsAt } : {}),
    });
    this.guard.forget(accountId);
    return (await this.get(accountId, scope))!;
  }

  async remove(accountId: string, scope: BudgetScope): Promise<void> {
    await this.store.setBudget(accountId, scope, null);
    this.guard.forget(accountId);
  }

  async get(accountId: string, scope: BudgetScope): Promise<BudgetView | null> {
    const state = (await this.list(accountId)).find((s) => s.scope === scope);
    return state ? budgetView(state, this.clock.now()) : null;
  }

  /** Every budget of the account (its own and its keys'), with the current period's spend. */
  async views(accountId: string, keyId?: string): Promise<BudgetView[]> {
    const now = this.clock.now();
    return (await this.list(accountId))
      .filter((s) => keyId === undefined || s.scope === accountScope || s.scope === keyScope(keyId))
      .map((s) => budgetView(s, now));
  }

  private async list(accountId: string): Promise<BudgetState[]> {
    await this.settle(accountId);
    return this.store.budgetStates(accountId, this.clock.now());
  }
}
