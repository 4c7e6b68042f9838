import type { BatchStore } from '../batches/types';
import type { VendorObjectStore } from '../gateway/objects';
import type { RateLimit } from '../config';
import type { TaskStore } from '../tasks/types';
import type { WebhookSecretStore } from '../webhooks/secret-store';

export interface AccountRecord {
  accountId: string;
  name: string;
  createdAt: number;
}

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

/**
 * Token counts of one LLM call, by how each is priced. Every field is a whole number of tokens; the kinds do not
 * overlap (whatever the vendor's own sums include).
 */
export interface TokenUsage {
  /** Prompt tokens at the input price: neither read from nor written to the vendor's cache. */
  input: number;
  /** Output tokens at the output price, reasoning apart. */
  output: number;
  /** Prompt tokens served from the vendor's cache. */
  cacheRead: number;
  /** Prompt tokens written to the vendor's cache. */
  cacheWrite: number;
  /** Reasoning (thinking) tokens, where the vendor reports them apart. */
  reasoning: number;
}

/** Cumulative gateway usage of one key for one model. */
export interface ModelUsage extends TokenUsage {
  requests: number;
}

export interface UsageStore {
  /** Adds calls and their tokens to the key's record for a model (one round trip in Redis). */
  add(keyId: string, model: string, totals: ModelUsage): Promise<void>;
  /** Model name -> totals; empty when the key has made no gateway call. */
  get(keyId: string): Promise<Record<string, ModelUsage>>;
}

/** What the adapters are told beyond where they live. */
export interface StoreOptions {
  /** How long a finished task (success or failed) is kept after its completion; status is then a 404. */
  taskRetentionMs: number;
  /** How long a ledger entry is kept (its reference with it); older ones go as new ones are posted. */
  ledgerRetentionMs: number;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  readonly accounts: AccountStore;
  readonly keyGate: KeyGate;
  readonly batches: BatchStore;
  readonly tasks: TaskStore;
  readonly webhookSecrets: WebhookSecretStore;
  readonly usage: UsageStore;
  readonly vendorObjects: VendorObjectStore;
  /** Resolves when the backing store answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
