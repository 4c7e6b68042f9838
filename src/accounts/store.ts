import type { RateLimit } from '../config';
import type {
  Budget,
  BudgetEvent,
  BudgetRefusal,
  BudgetScope,
  BudgetState,
  Dimension,
  RollupRead,
  RollupRow,
  UsageAttribution,
  UsageDelta,
} from './usage';

/** How the account's callbacks and batch webhooks are signed: the spec's scheme, or Standard Webhooks. */
export const WEBHOOK_SCHEMES = ['genway', 'standard'] as const;
export type WebhookScheme = (typeof WEBHOOK_SCHEMES)[number];

export interface AccountRecord {
  accountId: string;
  name: string;
  createdAt: number;
  webhookScheme: WebhookScheme;
  /** Where the account's budget events go (signed like its other webhooks); null = the configured default. */
  budgetWebhookUrl?: string | null;
}

/** What an admin may change on an account after creating it (null removes the budget webhook). */
export type AccountPatch = Partial<Pick<AccountRecord, 'name' | 'webhookScheme' | 'budgetWebhookUrl'>>;

export interface KeyRecord {
  keyId: string;
  accountId: string;
  name: string;
  /** SHA-256 hex of the secret key; the key itself is never stored. */
  hash: string;
  /** Allow-list of task-model ids and LLM model names; null = every model. */
  models: string[] | null;
  /** Per-key override of rateLimits.default; null = the default. */
  rateLimit: RateLimit | null;
  createdAt: number;
  revokedAt: number | null;
  /** After this the key is refused like a revoked one (set at creation, or by a rotation's grace); null = never. */
  expiresAt: number | null;
  /** When the key was last admitted, to the minute (written at most once a minute per process). */
  lastUsedAt: number | null;
  /** The key's first characters (`gwk_` and 8 more): what listings show, never the key. */
  prefix: string | null;
  /** Free labels (team, owner, tags). */
  metadata: Record<string, unknown> | null;
  /** The key this one replaced by rotation. */
  rotatedFrom: string | null;
}

export type LedgerKind = 'credit' | 'charge' | 'refund';

export interface LedgerEntry {
  accountId: string;
  kind: LedgerKind;
  /** Always positive; the kind says which way the money moves. */
  amountMicros: number;
  /** What the money is for, e.g. `task:<taskId>`; (reference, kind) is unique per account. */
  reference: string;
  at: number;
  balanceAfterMicros: number;
}

export type PostRequest = Omit<LedgerEntry, 'balanceAfterMicros'> & {
  /**
   * A charge that takes what the balance holds when it cannot cover `amountMicros` (never below zero): for usage
   * already consumed. The entry records the amount taken; an empty balance is still `insufficient_balance`.
   */
  atMost?: boolean;
  /** Whose spend this is: the posting also adds it to the usage rollups (and checks and raises budgets). */
  usage?: UsageAttribution;
  /** A charge that may not start over a hard budget of the key or the account: `over_budget` instead. */
  enforceBudgets?: boolean;
};

export type PostResult =
  | { status: 'applied'; entry: LedgerEntry; budgetEvents?: BudgetEvent[] }
  /** (reference, kind) was posted before: nothing moved; `entry` is the original posting. */
  | { status: 'duplicate'; entry: LedgerEntry }
  | { status: 'insufficient_balance'; balanceMicros: number }
  | { status: 'unknown_account' }
  | { status: 'over_budget'; budget: BudgetRefusal };

export interface AccountSummary {
  accountId: string;
  name: string;
  createdAt: number;
  balanceMicros: number;
}

export interface AccountStore {
  createAccount(account: AccountRecord): Promise<void>;
  getAccount(accountId: string): Promise<AccountRecord | null>;
  /** Applies `patch` to an existing account; null when there is no such account (nothing is created). */
  updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | null>;
  insertKey(key: KeyRecord): Promise<void>;
  /** The authentication lookup: one round trip in Redis. */
  findKeyByHash(hash: string): Promise<KeyRecord | null>;
  getKey(keyId: string): Promise<KeyRecord | null>;
  listKeys(accountId: string): Promise<KeyRecord[]>;
  /** Marks the key revoked (idempotent); null when no such key. */
  revokeKey(keyId: string, at: number): Promise<KeyRecord | null>;
  /**
   * Brings the key's expiry forward to `expiresAt` (never later than one it has) and tells every replica's key gate;
   * null when no such key.
   */
  expireKey(keyId: string, expiresAt: number): Promise<KeyRecord | null>;
  /** Records when the key was last used (best effort, coarse). */
  touchKey(hash: string, at: number): Promise<void>;
  /** Every account, oldest first, with its balance. */
  listAccounts(): Promise<AccountSummary[]>;
  /** Sets (or with null removes) the budget of `scope` (`account` or `key:<keyId>`). */
  setBudget(accountId: string, scope: BudgetScope, budget: Budget | null): Promise<void>;
  /** The account's budgets with what was spent in each one's current period at `at`. */
  budgetStates(accountId: string, at: number): Promise<BudgetState[]>;
  /** Adds gateway requests and tokens to the rollups (the usage meter's flushes; spend comes with postings). */
  addUsage(delta: UsageDelta): Promise<void>;
  /** The rows of one dimension for each period read, by name (`t` for the total, the model or the keyId). */
  readUsage(accountId: string, dimension: Dimension, reads: RollupRead[]): Promise<Map<string, RollupRow>[]>;
  balanceMicros(accountId: string): Promise<number | null>;
  /** Appends to the ledger atomically: a charge never takes the balance below zero. */
  post(request: PostRequest): Promise<PostResult>;
  /** Newest last. */
  ledger(accountId: string): Promise<LedgerEntry[]>;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** When not allowed: how long until `cost` tokens are available. */
  retryAfterMs: number;
  remaining: number;
}

/** What the key gate found: the key gone, revoked or past its expiry, or the rate-limit decision for a live key. */
export type KeyGateResult = RateLimitDecision | 'unknown' | 'revoked' | 'expired';

export interface KeyGate {
  /**
   * The per-key token bucket (bucket = keyId), shared by every replica in Redis mode (Redis TIME, not the caller's
   * clock), in-process in embedded mode.
   *
   * For a key whose record the caller already holds (cached): is it still there and not revoked, and may it spend
   * `cost` tokens of its bucket? One step, so a cached record never outlives a revocation. In Redis mode usually
   * without a round trip: a replica spends leases of the shared bucket and hears of revocations through the
   * key-event stream, within 1 s on every replica (src/store/redis/key-gate.ts); `remaining` then counts the
   * replica's lease plus what the shared bucket held at its last lease.
   *
   * A result at once (no promise) when it decides from memory, as most calls are: admission then takes no tick.
   */
  pass(
    hash: string,
    bucketId: string,
    limit: RateLimit,
    cost?: number,
  ): KeyGateResult | Promise<KeyGateResult>;
}
