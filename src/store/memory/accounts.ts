import type {
  AccountPatch,
  AccountRecord,
  AccountStore,
  AccountSummary,
  KeyRecord,
  LedgerEntry,
  PostRequest,
  PostResult,
} from '../../accounts/store';
import {
  accountScope,
  addRow,
  budgetCurrent,
  budgetLevel,
  dayOf,
  emptyRow,
  keyScope,
  monthOf,
  postingRow,
  spendOf,
  stampOf,
  TOTAL,
  type Budget,
  type BudgetEvent,
  type BudgetScope,
  type BudgetState,
  type Dimension,
  type Grain,
  type RollupRead,
  type RollupRow,
  type UsageDelta,
} from '../../accounts/usage';

interface AccountState {
  record: AccountRecord;
  balanceMicros: number;
  keyIds: Set<string>;
  ledger: LedgerEntry[];
  refs: Map<string, LedgerEntry>;
  /** `${grain}:${stamp}:${dimension}` -> row name -> counters. */
  rollups: Map<string, Map<string, RollupRow>>;
  budgets: Map<BudgetScope, Budget>;
  /** scope -> `${stamp}:${level}`: the highest level already raised in that period. */
  fired: Map<BudgetScope, string>;
  /** A window budget's spend: what was posted inside the window since it was set. */
  windowSpent: Map<BudgetScope, number>;
}

/** A detached copy (callers never hold the stored record); cheaper than structuredClone on the auth path. */
function copyKey(key: KeyRecord): KeyRecord {
  return {
    ...key,
    models: key.models && [...key.models],
    rateLimit: key.rateLimit && { ...key.rateLimit },
    metadata: key.metadata && structuredClone(key.metadata),
  };
}

/** Embedded mode: one process owns the state, so every method is atomic by running in one tick. */
export class MemoryAccountStore implements AccountStore {
  private readonly accounts = new Map<string, AccountState>();
  private readonly keysByHash = new Map<string, KeyRecord>();
  private readonly keysById = new Map<string, KeyRecord>();

  constructor(private readonly ledgerRetentionMs = Infinity) {}

  async createAccount(account: AccountRecord): Promise<void> {
    if (this.accounts.has(account.accountId)) return;
    this.accounts.set(account.accountId, {
      record: { ...account },
      balanceMicros: 0,
      keyIds: new Set(),
      ledger: [],
      refs: new Map(),
      rollups: new Map(),
      budgets: new Map(),
      fired: new Map(),
      windowSpent: new Map(),
    });
  }

  async getAccount(accountId: string): Promise<AccountRecord | null> {
    const state = this.accounts.get(accountId);
    return state ? { ...state.record } : null;
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | null> {
    const state = this.accounts.get(accountId);
    if (!state) return null;
    state.record = { ...state.record, ...patch };
    if (state.record.budgetWebhookUrl === null) delete state.record.budgetWebhookUrl;
    return { ...state.record };
  }

  async insertKey(key: KeyRecord): Promise<void> {
    const stored = copyKey(key);
    this.keysByHash.set(key.hash, stored);
    this.keysById.set(key.keyId, stored);
    this.accounts.get(key.accountId)?.keyIds.add(key.keyId);
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    const key = this.keysByHash.get(hash);
    return key ? copyKey(key) : null;
  }

  /** The key gate's check, synchronous in this process. */
  keyStatus(hash: string, now: number): 'active' | 'revoked' | 'expired' | 'unknown' {
    const key = this.keysByHash.get(hash);
    if (!key) return 'unknown';
    if (key.revokedAt !== null) return 'revoked';
    return key.expiresAt !== null && now >= key.expiresAt ? 'expired' : 'active';
  }

  async getKey(keyId: string): Promise<KeyRecord | null> {
    const key = this.keysById.get(keyId);
    return key ? copyKey(key) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    const ids = [...(this.accounts.get(accountId)?.keyIds ?? [])];
    return ids.map((id) => copyKey(this.keysById.get(id)!));
  }

  async revokeKey(keyId: string, at: number): Promise<KeyRecord | null> {
    const key = this.keysById.get(keyId);
    if (!key) return null;
    key.revokedAt ??= at;
    return copyKey(key);
  }

  async expireKey(keyId: string, expiresAt: number): Promise<KeyRecord | null> {
    const key = this.keysById.get(keyId);
    if (!key) return null;
    key.expiresAt = key.expiresAt === null ? expiresAt : Math.min(key.expiresAt, expiresAt);
    return copyKey(key);
  }

  async touchKey(hash: string, at: number): Promise<void> {
    const key = this.keysByHash.get(hash);
    if (key) key.lastUsedAt = Math.max(key.lastUsedAt ?? 0, at);
  }

  async listAccounts(): Promise<AccountSummary[]> {
    return [...this.accounts.values()].map((s) => ({
      accountId: s.record.accountId,
      name: s.record.name,
      createdAt: s.record.createdAt,
      balanceMicros: s.balanceMicros,
    }));
  }

  async setBudget(accountId: string, scope: BudgetScope, budget: Budget | null): Promise<void> {
    const state = this.accounts.get(accountId);
    if (!state) return;
    const old = state.budgets.get(scope);
    // A new spec may cross its thresholds afresh; a window's spend stays only while the window is the same one.
    state.fired.delete(scope);
    if (!budget || old?.startsAt !== budget.startsAt || old?.endsAt !== budget.endsAt)
      state.windowSpent.delete(scope);
    if (budget) state.budgets.set(scope, { ...budget });
    else state.budgets.delete(scope);
  }

  async budgetStates(accountId: string, at: number): Promise<BudgetState[]> {
    const state = this.accounts.get(accountId);
    if (!state) return [];
    return [...state.budgets].map(([scope, budget]) => this.budgetState(state, scope, budget, at));
  }

  private budgetState(state: AccountState, scope: BudgetScope, budget: Budget, at: number): BudgetState {
    if (budget.period === 'window') {
      const spentMicros = state.windowSpent.get(scope) ?? 0;
      return { ...budget, scope, stamp: String(budget.startsAt), spentMicros };
    }
    const stamp = stampOf(budget.period, at);
    const grain: Grain = budget.period === 'day' ? 'd' : 'm';
    const row =
      scope === accountScope
        ? state.rollups.get(`${grain}:${stamp}:t`)?.get(TOTAL)
        : state.rollups.get(`${grain}:${stamp}:k`)?.get(scope.slice(4));
    return { ...budget, scope, stamp, spentMicros: row ? spendOf(row) : 0 };
  }

  /** The budgets a posting of the key counts against. */
  private budgetsOf(state: AccountState, keyId: string): [BudgetScope, Budget][] {
    const out: [BudgetScope, Budget][] = [];
    const account = state.budgets.get(accountScope);
    if (account) out.push([accountScope, account]);
    const key = state.budgets.get(keyScope(keyId));
    if (key) out.push([keyScope(keyId), key]);
    return out;
  }

  async addUsage(delta: UsageDelta): Promise<void> {
    const state = this.accounts.get(delta.accountId);
    if (state) this.addRows(state, delta.at, delta.model, delta.keyId, delta.counts);
  }

  private addRows(state: AccountState, at: number, model: string, keyId: string, counts: RollupRow): void {
    for (const [grain, stamp] of [
      ['d', dayOf(at)],
      ['m', monthOf(at)],
    ] as const) {
      for (const [dimension, name] of [
        ['t', TOTAL],
        ['m', model],
        ['k', keyId],
      ] as const) {
        const id = `${grain}:${stamp}:${dimension}`;
        let rows = state.rollups.get(id);
        if (!rows) state.rollups.set(id, (rows = new Map()));
        const row = rows.get(name);
        if (row) addRow(row, counts);
        else rows.set(name, addRow(emptyRow(), counts));
      }
    }
  }

  async readUsage(
    accountId: string,
    dimension: Dimension,
    reads: RollupRead[],
  ): Promise<Map<string, RollupRow>[]> {
    const state = this.accounts.get(accountId);
    return reads.map(({ grain, stamp }) => {
      const rows = state?.rollups.get(`${grain}:${stamp}:${dimension}`);
      return new Map([...(rows ?? [])].map(([name, row]) => [name, [...row]]));
    });
  }

  async balanceMicros(accountId: string): Promise<number | null> {
    return this.accounts.get(accountId)?.balanceMicros ?? null;
  }

  async post(request: PostRequest): Promise<PostResult> {
    const state = this.accounts.get(request.accountId);
    if (!state) return { status: 'unknown_account' };
    const refKey = `${request.kind}:${request.reference}`;
    const previous = state.refs.get(refKey);
    if (previous) return { status: 'duplicate', entry: { ...previous } };
    const { atMost, usage, enforceBudgets, ...posting } = request;
    const budgets = usage ? this.budgetsOf(state, usage.keyId) : [];
    if (request.kind === 'charge' && enforceBudgets) {
      for (const [scope, budget] of budgets) {
        const current = this.budgetState(state, scope, budget, request.at);
        if (!budgetCurrent(current, request.at)) continue;
        if (current.spentMicros + request.amountMicros > budget.limitMicros)
          return { status: 'over_budget', budget: current };
      }
    }
    if (request.kind === 'charge' && atMost && state.balanceMicros > 0) {
      posting.amountMicros = Math.min(posting.amountMicros, state.balanceMicros);
    }
    const delta = posting.kind === 'charge' ? -posting.amountMicros : posting.amountMicros;
    if (state.balanceMicros + delta < 0) {
      return { status: 'insufficient_balance', balanceMicros: state.balanceMicros };
    }
    state.balanceMicros += delta;
    const entry: LedgerEntry = { ...posting, balanceAfterMicros: state.balanceMicros };
    state.ledger.push(entry);
    state.refs.set(refKey, entry);
    // Entries past their retention go from the front (the ledger is in posting order), references with them.
    const cutoff = entry.at - this.ledgerRetentionMs;
    let drop = 0;
    while (drop < state.ledger.length && state.ledger[drop].at < cutoff) {
      const old = state.ledger[drop++];
      state.refs.delete(`${old.kind}:${old.reference}`);
    }
    if (drop) state.ledger.splice(0, drop);
    if (!usage || posting.kind === 'credit') return { status: 'applied', entry: { ...entry } };
    const row = postingRow(usage.source, posting.kind, entry.amountMicros);
    this.addRows(state, entry.at, usage.model, usage.keyId, row);
    for (const [scope, budget] of budgets) {
      if (budget.period === 'window' && entry.at >= budget.startsAt! && entry.at < budget.endsAt!)
        state.windowSpent.set(scope, (state.windowSpent.get(scope) ?? 0) + spendOf(row));
    }
    const budgetEvents: BudgetEvent[] = [];
    for (const [scope, budget] of budgets) {
      const current = this.budgetState(state, scope, budget, entry.at);
      if (!budgetCurrent(current, entry.at)) continue;
      const level = budgetLevel(budget, current.spentMicros);
      const [firedStamp, firedLevel] = (state.fired.get(scope) ?? ':0').split(':');
      const raised = firedStamp === current.stamp ? Number(firedLevel) : 0;
      if (level <= raised) continue;
      state.fired.set(scope, `${current.stamp}:${level}`);
      // A posting that jumps past both levels raises the soft one too, first (each still once per period).
      if (level === 2 && raised === 0 && budget.softPercent !== null)
        budgetEvents.push({ ...current, accountId: entry.accountId, level: 'soft' });
      budgetEvents.push({ ...current, accountId: entry.accountId, level: level === 2 ? 'hard' : 'soft' });
    }
    return { status: 'applied', entry: { ...entry }, ...(budgetEvents.length ? { budgetEvents } : {}) };
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    return (this.accounts.get(accountId)?.ledger ?? []).map((e) => ({ ...e }));
  }
}
