import type { RateLimit } from '../config';

/** How the account's callbacks and batch webhooks are signed: the spec's scheme, or Standard Webhooks. */
export const WEBHOOK_SCHEMES = ['genway', 'standard'] as const;
export type WebhookScheme = (typeof WEBHOOK_SCHEMES)[number];

export interface AccountRecord {
  accountId: string;
  name: string;
  createdAt: number;
  webhookScheme: WebhookScheme;
}

/** What an admin may change on an account after creating it. */
export type AccountPatch = Partial<Pick<AccountRecord, 'name' | 'webhookScheme'>>;

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
};

export type PostResult =
  | { status: 'applied'; entry: LedgerEntry }
  /** (reference, kind) was posted before: nothing moved; `entry` is the original posting. */
  | { status: 'duplicate'; entry: LedgerEntry }
  | { status: 'insufficient_balance'; balanceMicros: number }
  | { status: 'unknown_account' };

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

/** What the key gate found: the key gone or revoked, or the rate-limit decision for a live key. */
export type KeyGateResult = RateLimitDecision | 'unknown' | 'revoked';

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
   */
  pass(hash: string, bucketId: string, limit: RateLimit, cost?: number): Promise<KeyGateResult>;
}
