import type { RateLimit } from '../config';
import type { Clock } from '../clock';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { microsToUsd, usdToMicros } from '../money';
import type { AccountPatch, AccountStore, KeyRecord, LedgerEntry, WebhookScheme } from './store';
import { generateApiKey, hashApiKey, isWellFormedKey } from './api-keys';

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

export type AuthFailure = 'missing' | 'malformed' | 'unknown' | 'revoked';

export interface KeyView {
  keyId: string;
  name: string;
  models: string[] | null;
  rateLimit: RateLimit | null;
  createdAt: number;
  revoked: boolean;
}

function keyView(key: KeyRecord): KeyView {
  return {
    keyId: key.keyId,
    name: key.name,
    models: key.models,
    rateLimit: key.rateLimit,
    createdAt: key.createdAt,
    revoked: key.revokedAt !== null,
  };
}

/** How long a hot path may reuse a key's record; revocation is still checked on every call (the key gate). */
const RECALL_MS = 60_000;
const RECALL_MAX = 10_000;

export class AccountsService {
  /** Recently authenticated keys by hash: only fields a key never changes (revocation is not one of them). */
  private readonly recalled = new Map<string, Recalled & { until: number }>();

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
    if (micros > 0) await this.post(accountId, 'credit', micros, `initial:${accountId}`);
    return { accountId };
  }

  async describeAccount(accountId: string) {
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
      balanceUsd: microsToUsd(balance ?? 0),
      keys: keys.map(keyView),
    };
  }

  /** PATCH /admin/v1/accounts/{accountId}: changes the given settings, then describes the account. */
  async updateAccount(accountId: string, patch: AccountPatch) {
    if (!(await this.store.updateAccount(accountId, patch)))
      throw new ApiError('not_found', `No account with accountId ${accountId}`);
    return this.describeAccount(accountId);
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
    const entry = await this.post(accountId, 'credit', usdToMicros(amountUsd), reference);
    return { balanceUsd: microsToUsd(entry.balanceAfterMicros) };
  }

  async createKey(
    accountId: string,
    options: { name?: string; models?: string[]; rateLimit?: RateLimit },
  ): Promise<{ keyId: string; key: string }> {
    await this.requireAccount(accountId);
    const { key, hash } = generateApiKey();
    const keyId = newId('key');
    await this.store.insertKey({
      keyId,
      accountId,
      name: options.name ?? keyId,
      hash,
      models: options.models ?? null,
      rateLimit: options.rateLimit ?? null,
      createdAt: this.clock.now(),
      revokedAt: null,
    });
    return { keyId, key };
  }

  async revokeKey(keyId: string): Promise<{ keyId: string; revoked: true }> {
    const key = await this.store.revokeKey(keyId, this.clock.now());
    if (!key) throw new ApiError('not_found', `No key with keyId ${keyId}`);
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
   * checks revocation in the same step as the rate limit: see admit() in src/http/auth.ts.
   */
  async recall(presented: string | undefined): Promise<Recalled | AuthFailure> {
    if (!presented) return 'missing';
    if (!isWellFormedKey(presented)) return 'malformed';
    const hash = hashApiKey(presented);
    const now = this.clock.now();
    const hit = this.recalled.get(hash);
    if (hit && hit.until > now) return hit;
    const key = await this.store.findKeyByHash(hash);
    if (!key) return 'unknown';
    if (key.revokedAt !== null) return 'revoked';
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

  async balanceUsd(accountId: string): Promise<number> {
    return microsToUsd((await this.store.balanceMicros(accountId)) ?? 0);
  }

  /** Takes money or throws 402; idempotent per reference (a retried charge is taken once). */
  async charge(accountId: string, amountMicros: number, reference: string): Promise<LedgerEntry> {
    return this.post(accountId, 'charge', amountMicros, reference);
  }

  /**
   * Charges for something already consumed (metered LLM usage): the whole amount, or what the balance holds when
   * it cannot cover it. Null when the balance was already empty (nothing is owed that could be taken).
   */
  async chargeAtMost(
    accountId: string,
    amountMicros: number,
    reference: string,
  ): Promise<LedgerEntry | null> {
    try {
      return await this.post(accountId, 'charge', amountMicros, reference, true);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'insufficient_balance') return null;
      throw err;
    }
  }

  /** Gives money back; idempotent per reference, so a retried refund never pays twice. */
  async refund(accountId: string, amountMicros: number, reference: string): Promise<LedgerEntry> {
    return this.post(accountId, 'refund', amountMicros, reference);
  }

  ledger(accountId: string): Promise<LedgerEntry[]> {
    return this.store.ledger(accountId);
  }

  private async post(
    accountId: string,
    kind: LedgerEntry['kind'],
    amountMicros: number,
    reference: string,
    atMost = false,
  ): Promise<LedgerEntry> {
    const at = this.clock.now();
    const result = await this.store.post({ accountId, kind, amountMicros, reference, at, atMost });
    switch (result.status) {
      case 'applied':
      case 'duplicate':
        return result.entry;
      case 'insufficient_balance':
        throw new ApiError(
          'insufficient_balance',
          `Insufficient balance: this needs ${microsToUsd(amountMicros)} USD and the account holds ${microsToUsd(result.balanceMicros)} USD`,
        );
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
