import type { RateLimit } from '../config';
import type { Clock } from '../clock';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { microsToUsd, usdToMicros } from '../money';
import type { AccountPatch, AccountStore, KeyRecord, LedgerEntry, PostRequest, WebhookScheme } from './store';
import {
  keyScope,
  type Budget,
  type BudgetEvent,
  type BudgetRefusal,
  type BudgetState,
  type UsageAttribution,
} from './usage';

/** A budget's spec without its current spend (a window keeps its bounds). */
const budgetOf = ({ scope: _scope, stamp: _stamp, spentMicros: _spent, ...spec }: BudgetState): Budget =>
  spec;
import { generateApiKey, hashApiKey, isWellFormedKey, type KeyHashMemo } from './api-keys';

/** Who is calling: what the auth middleware leaves in res.locals.auth. */
/** A recalled key: who it is, and the hash the key gate checks. */
export interface Recalled {
  auth: AuthContext;
  hash: string;
}

/** Who is calling; shared (frozen) between the requests of one key while it is recalled. */
export interface AuthContext {
  readonly keyId: string;
  readonly accountId: string;
  readonly models: readonly string[] | null;
  readonly rateLimit: Readonly<RateLimit> | null;
}

/** The spend (micro-USD, a refund's negative) of a posting attributed to a key, and when it was made. */
type SpendListener = (accountId: string, keyId: string, micros: number, at: number) => void;

export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired';

export interface KeyView {
  keyId: string;
  name: string;
  /** The key's first characters (`gwk_` and 8 more); the key itself is never shown again. */
  prefix: string | null;
  models: string[] | null;
  rateLimit: RateLimit | null;
  metadata: Record<string, unknown> | null;
  createdAt: number;
  status: 'active' | 'expired' | 'revoked';
  revoked: boolean;
  /** ISO 8601, null = never. */
  expiresAt: string | null;
  /** ISO 8601 to the minute; null = never used. */
  lastUsedAt: string | null;
  rotatedFrom: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function keyView(key: KeyRecord, now: number): KeyView {
  const expired = key.expiresAt !== null && now >= key.expiresAt;
  return {
    keyId: key.keyId,
    name: key.name,
    prefix: key.prefix,
    models: key.models,
    rateLimit: key.rateLimit,
    metadata: key.metadata,
    createdAt: key.createdAt,
    status: key.revokedAt !== null ? 'revoked' : expired ? 'expired' : 'active',
    revoked: key.revokedAt !== null,
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    rotatedFrom: key.rotatedFrom,
  };
}

export interface KeyOptions {
  name?: string;
  models?: string[];
  rateLimit?: RateLimit;
  /** ms since the epoch. */
  expiresAt?: number;
  metadata?: Record<string, unknown>;
}

/** How many characters of a key listings show: `gwk_` and 8 of its 43 random ones (48 bits: not a guess). */
const PREFIX_LENGTH = 12;
/** lastUsedAt is written at most this often per key and process. */
const TOUCH_MS = 60_000;

/** How long a hot path may reuse a key's record; revocation is still checked on every call (the key gate). */
const RECALL_MS = 60_000;
const RECALL_MAX = 10_000;

export class AccountsService {
  /** Recently authenticated keys by hash: only fields a key never changes (revocation is not one of them). */
  private readonly recalled = new Map<string, Recalled & { until: number }>();
  /** When this process last wrote each key's lastUsedAt, by hash. */
  private readonly touched = new Map<string, number>();
  private readonly budgetListeners: ((event: BudgetEvent) => void)[] = [];
  private readonly balanceListeners: ((accountId: string, balanceMicros: number) => void)[] = [];
  private readonly spendListeners: SpendListener[] = [];
  /** Posts what this process owes an account (or every account) before its balance or ledger is read. */
  private settle: (accountId?: string) => Promise<void> = () => Promise.resolve();

  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
  ) {}

  async createAccount(
    name: string,
    balanceUsd = 0,
    settings: Omit<AccountPatch, 'name'> = {},
  ): Promise<{ accountId: string }> {
    const accountId = newId('acct');
    await this.store.createAccount({
      accountId,
      name,
      createdAt: this.clock.now(),
      webhookScheme: settings.webhookScheme ?? 'genway',
    });
    const micros = usdToMicros(balanceUsd);
    if (micros > 0)
      await this.post({ accountId, kind: 'credit', amountMicros: micros, reference: `initial:${accountId}` });
    return { accountId };
  }

  /**
   * What the balance and ledger reads below wait for first: the gateway's charges this process has served and not
   * yet posted (src/gateway/charges.ts), so a read through a replica sees that replica's calls.
   */
  settleWith(settle: (accountId?: string) => Promise<void>): void {
    this.settle = settle;
  }

  async describeAccount(accountId: string) {
    await this.settle(accountId);
    const account = await this.requireAccount(accountId);
    const [balance, keys] = await Promise.all([
      this.store.balanceMicros(accountId),
      this.store.listKeys(accountId),
    ]);
    return {
      accountId,
      name: account.name,
      createdAt: account.createdAt,
      webhookScheme: account.webhookScheme,
      budgetWebhookUrl: account.budgetWebhookUrl ?? null,
      balanceUsd: microsToUsd(balance ?? 0),
      keys: keys.map((k) => keyView(k, this.clock.now())),
    };
  }

  /** GET /admin/v1/accounts: every account with its balance. */
  async listAccounts() {
    await this.settle();
    const accounts = await this.store.listAccounts();
    return accounts.map(({ balanceMicros, ...a }) => ({ ...a, balanceUsd: microsToUsd(balanceMicros) }));
  }

  async listKeys(accountId: string): Promise<KeyView[]> {
    await this.requireAccount(accountId);
    const now = this.clock.now();
    return (await this.store.listKeys(accountId)).map((k) => keyView(k, now));
  }

  async describeKey(keyId: string): Promise<KeyView & { accountId: string }> {
    const key = await this.requireKey(keyId);
    return { ...keyView(key, this.clock.now()), accountId: key.accountId };
  }

  /** PATCH /admin/v1/accounts/{accountId}: changes the given settings, then describes the account. */
  async updateAccount(accountId: string, patch: AccountPatch) {
    if (!(await this.store.updateAccount(accountId, patch)))
      throw new ApiError('not_found', `No account with accountId ${accountId}`);
    return this.describeAccount(accountId);
  }

  /** Where the account's budget events go; null = the configured default. */
  async budgetWebhookUrl(accountId: string): Promise<string | null> {
    return (await this.store.getAccount(accountId))?.budgetWebhookUrl ?? null;
  }

  /** How the account's deliveries are signed (the spec's scheme when the account is unknown). */
  async webhookScheme(accountId: string): Promise<WebhookScheme> {
    return (await this.store.getAccount(accountId))?.webhookScheme ?? 'genway';
  }

  /** Adds money; with a `reference`, a retried credit is applied once. */
  async credit(
    accountId: string,
    amountUsd: number,
    reference = newId('credit'),
  ): Promise<{ balanceUsd: number }> {
    await this.requireAccount(accountId);
    const entry = await this.post({
      accountId,
      kind: 'credit',
      amountMicros: usdToMicros(amountUsd),
      reference,
    });
    return { balanceUsd: microsToUsd(entry.balanceAfterMicros) };
  }

  async createKey(
    accountId: string,
    options: KeyOptions,
    rotatedFrom: string | null = null,
  ): Promise<{ keyId: string; key: string }> {
    await this.requireAccount(accountId);
    const now = this.clock.now();
    if (options.expiresAt !== undefined && options.expiresAt <= now)
      throw new ApiError('invalid_request', 'body.expiresAt: must be in the future');
    const { key, hash } = generateApiKey();
    const keyId = newId('key');
    await this.store.insertKey({
      keyId,
      accountId,
      name: options.name ?? keyId,
      hash,
      models: options.models ?? null,
      rateLimit: options.rateLimit ?? null,
      createdAt: now,
      revokedAt: null,
      expiresAt: options.expiresAt ?? null,
      lastUsedAt: null,
      prefix: key.slice(0, PREFIX_LENGTH),
      metadata: options.metadata ?? null,
      rotatedFrom,
    });
    return { keyId, key };
  }

  /**
   * POST /admin/v1/keys/{keyId}/rotate: a new key with the old one's name, allow-list, limit and metadata (and its
   * budget); the old key keeps working for `graceSeconds`, then is refused like a revoked one.
   */
  async rotateKey(
    keyId: string,
    graceSeconds: number,
    expiresAt?: number,
  ): Promise<{ keyId: string; key: string; rotatedFrom: string; oldKeyExpiresAt: string }> {
    const old = await this.requireKey(keyId);
    const now = this.clock.now();
    if (old.revokedAt !== null) throw new ApiError('conflict', `Key ${keyId} is revoked: nothing to rotate`);
    if (old.expiresAt !== null && now >= old.expiresAt)
      throw new ApiError('conflict', `Key ${keyId} has expired: nothing to rotate`);
    const created = await this.createKey(
      old.accountId,
      {
        name: old.name,
        ...(old.models ? { models: old.models } : {}),
        ...(old.rateLimit ? { rateLimit: old.rateLimit } : {}),
        ...(old.metadata ? { metadata: old.metadata } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
      },
      keyId,
    );
    const budget = (await this.store.budgetStates(old.accountId, now)).find(
      (b) => b.scope === keyScope(keyId),
    );
    if (budget) await this.store.setBudget(old.accountId, keyScope(created.keyId), budgetOf(budget));
    const expired = await this.store.expireKey(keyId, now + graceSeconds * 1000);
    this.forgetKey(old.hash);
    return {
      ...created,
      rotatedFrom: keyId,
      oldKeyExpiresAt: new Date(expired?.expiresAt ?? now).toISOString(),
    };
  }

  async revokeKey(keyId: string): Promise<{ keyId: string; revoked: true }> {
    const key = await this.store.revokeKey(keyId, this.clock.now());
    if (!key) throw new ApiError('not_found', `No key with keyId ${keyId}`);
    this.forgetKey(key.hash);
    return { keyId, revoked: true };
  }

  /** 404 unless the key exists (revoked keys too: their history stays readable). */
  async requireKey(keyId: string): Promise<KeyRecord> {
    const key = await this.store.getKey(keyId);
    if (!key) throw new ApiError('not_found', `No key with keyId ${keyId}`);
    return key;
  }

  /**
   * Resolves a presented key to its caller, or says why it cannot. The key's record may come from a short-lived
   * cache (only fields a key never changes), so the caller must then pass the key gate (store.keyGate), which
   * checks revocation in the same step as the rate limit: see admit() in src/http/auth.ts. `memo`: the hash of the
   * key its connection presented last (the gateway's; see KeyHashMemo).
   */
  recall(
    presented: string | undefined,
    memo?: KeyHashMemo,
  ): Recalled | AuthFailure | Promise<Recalled | AuthFailure> {
    if (!presented) return 'missing';
    if (!isWellFormedKey(presented)) return 'malformed';
    const hash = memo ? memo.hashOf(presented) : hashApiKey(presented);
    const now = this.clock.now();
    const hit = this.recalled.get(hash);
    // A key recalled a moment ago is answered at once: no promise on a call's path for what is in memory.
    if (hit && hit.until > now) return hit;
    return this.lookUp(hash, now);
  }

  private async lookUp(hash: string, now: number): Promise<Recalled | AuthFailure> {
    const key = await this.store.findKeyByHash(hash);
    if (!key) return 'unknown';
    if (key.revokedAt !== null) return 'revoked';
    if (key.expiresAt !== null && now >= key.expiresAt) return 'expired';
    // Shared by every request of this key until it expires: frozen, so no caller can change another's view.
    const auth: AuthContext = Object.freeze({
      keyId: key.keyId,
      accountId: key.accountId,
      models: key.models === null ? null : Object.freeze([...key.models]),
      rateLimit: key.rateLimit === null ? null : Object.freeze({ ...key.rateLimit }),
    });
    if (this.recalled.size >= RECALL_MAX) this.recalled.clear();
    const entry = { auth, hash, until: now + RECALL_MS };
    this.recalled.set(hash, entry);
    return entry;
  }

  /** Drops a recalled key (the key gate found it revoked or gone). */
  forget(hash: string): void {
    this.recalled.delete(hash);
  }

  private forgetKey(hash: string): void {
    this.recalled.delete(hash);
    this.touched.delete(hash);
  }

  /** An admitted call: the key's lastUsedAt, written at most once a minute per key and process, off the call's path. */
  noteUse(hash: string): void {
    const now = this.clock.now();
    const last = this.touched.get(hash);
    if (last !== undefined && now - last < TOUCH_MS) return;
    if (this.touched.size >= RECALL_MAX) this.touched.clear();
    this.touched.set(hash, now);
    // Best effort: a lost write only makes lastUsedAt a minute older.
    this.store.touchKey(hash, now).catch(() => this.touched.delete(hash));
  }

  async balanceUsd(accountId: string): Promise<number> {
    await this.settle(accountId);
    return microsToUsd((await this.store.balanceMicros(accountId)) ?? 0);
  }

  /** Takes money or throws 402; idempotent per reference (a retried charge is taken once). */
  async charge(
    accountId: string,
    amountMicros: number,
    reference: string,
    usage?: UsageAttribution,
  ): Promise<LedgerEntry> {
    return this.post({ accountId, kind: 'charge', amountMicros, reference, usage });
  }

  /**
   * Charges for something already consumed (metered LLM usage): the whole amount, or what the balance holds when
   * it cannot cover it. Null when the balance was already empty (nothing is owed that could be taken).
   */
  async chargeAtMost(
    accountId: string,
    amountMicros: number,
    reference: string,
    usage?: UsageAttribution,
    /** When it was spent (the day it counts in); now by default. */
    at?: number,
    /**
     * Called once the store applied it, before the balance and spend listeners hear of it: the gateway's tabs stop
     * counting it as owed in the same step, so no check sees it twice.
     */
    applied?: () => void,
  ): Promise<LedgerEntry | null> {
    try {
      return await this.post(
        { accountId, kind: 'charge', amountMicros, reference, usage, atMost: true },
        at,
        applied,
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 'insufficient_balance') return null;
      throw err;
    }
  }

  /** Gives money back; idempotent per reference, so a retried refund never pays twice. */
  async refund(
    accountId: string,
    amountMicros: number,
    reference: string,
    usage?: UsageAttribution,
  ): Promise<LedgerEntry> {
    return this.post({ accountId, kind: 'refund', amountMicros, reference, usage });
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    await this.settle(accountId);
    return this.store.ledger(accountId);
  }

  /** Called with every budget threshold a posting crossed (once per budget, level and period). */
  onBudgetEvent(listener: (event: BudgetEvent) => void): void {
    this.budgetListeners.push(listener);
  }

  /** Called with an account's balance after each posting through this service (and a refused charge's balance). */
  onBalance(listener: (accountId: string, balanceMicros: number) => void): void {
    this.balanceListeners.push(listener);
  }

  /** Called with the spend of each charge or refund with a usage attribution posted through this service. */
  onSpend(listener: SpendListener): void {
    this.spendListeners.push(listener);
  }

  private balanceIs(accountId: string, balanceMicros: number): void {
    for (const listener of this.balanceListeners) listener(accountId, balanceMicros);
  }

  /** Hands a posting's budget events to the listeners (a task's charge is posted by the task store). */
  budgetEvents(events: BudgetEvent[] | undefined): void {
    if (!events) return;
    for (const event of events) for (const listener of this.budgetListeners) listener(event);
  }

  private async post(
    request: Omit<PostRequest, 'at'>,
    at = this.clock.now(),
    applied?: () => void,
  ): Promise<LedgerEntry> {
    const { accountId, amountMicros, usage } = request;
    const result = await this.store.post({ ...request, at });
    switch (result.status) {
      case 'applied': {
        applied?.();
        const { entry } = result;
        if (usage && entry.kind !== 'credit') {
          const spent = entry.kind === 'refund' ? -entry.amountMicros : entry.amountMicros;
          for (const listener of this.spendListeners) listener(accountId, usage.keyId, spent, at);
        }
        this.budgetEvents(result.budgetEvents);
        this.balanceIs(accountId, entry.balanceAfterMicros);
        return entry;
      }
      case 'duplicate':
        return result.entry;
      case 'insufficient_balance':
        this.balanceIs(accountId, result.balanceMicros);
        throw new ApiError(
          'insufficient_balance',
          `Insufficient balance: this needs ${microsToUsd(amountMicros)} USD and the account holds ${microsToUsd(result.balanceMicros)} USD`,
        );
      case 'over_budget':
        throw budgetError(result.budget);
      case 'unknown_account':
        throw new ApiError('not_found', `No account with accountId ${accountId}`);
    }
  }

  private async requireAccount(accountId: string) {
    const account = await this.store.getAccount(accountId);
    if (!account) throw new ApiError('not_found', `No account with accountId ${accountId}`);
    return account;
  }
}

/** 403 unless the key's allow-list (if any) names `model`. */
export function assertModelAllowed(auth: AuthContext, model: string): void {
  if (auth.models !== null && !auth.models.includes(model)) {
    throw new ApiError('forbidden', `This API key has no access to model ${model}`);
  }
}

/** The 402 of a call that would start over a hard budget (the caller renders it: envelope or vendor shape). */
export function budgetError(budget: BudgetRefusal): ApiError {
  const whose = budget.scope === 'account' ? 'this account' : 'this API key';
  const period =
    budget.period === 'window'
      ? `budget for ${new Date(budget.startsAt!).toISOString()} to ${new Date(budget.endsAt!).toISOString()}`
      : `${budget.period === 'day' ? 'daily' : 'monthly'} budget (${budget.stamp}, UTC)`;
  return new ApiError(
    'insufficient_balance',
    `Budget exceeded: ${whose} has spent ${microsToUsd(budget.spentMicros)} of its ${microsToUsd(budget.limitMicros)} USD ${period}`,
  );
}
