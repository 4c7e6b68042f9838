import type {
  AccountPatch,
  AccountRecord,
  AccountStore,
  KeyRecord,
  LedgerEntry,
  PostRequest,
  PostResult,
} from '../../accounts/store';

interface AccountState {
  record: AccountRecord;
  balanceMicros: number;
  keyIds: Set<string>;
  ledger: LedgerEntry[];
  refs: Map<string, LedgerEntry>;
}

/** A detached copy (callers never hold the stored record); cheaper than structuredClone on the auth path. */
function copyKey(key: KeyRecord): KeyRecord {
  return {
    ...key,
    models: key.models && [...key.models],
    rateLimit: key.rateLimit && { ...key.rateLimit },
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
  keyStatus(hash: string): 'active' | 'revoked' | 'unknown' {
    const key = this.keysByHash.get(hash);
    return !key ? 'unknown' : key.revokedAt === null ? 'active' : 'revoked';
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

  async balanceMicros(accountId: string): Promise<number | null> {
    return this.accounts.get(accountId)?.balanceMicros ?? null;
  }

  async post(request: PostRequest): Promise<PostResult> {
    const state = this.accounts.get(request.accountId);
    if (!state) return { status: 'unknown_account' };
    const refKey = `${request.kind}:${request.reference}`;
    const previous = state.refs.get(refKey);
    if (previous) return { status: 'duplicate', entry: { ...previous } };
    const { atMost, ...posting } = request;
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
    return { status: 'applied', entry: { ...entry } };
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    return (this.accounts.get(accountId)?.ledger ?? []).map((e) => ({ ...e }));
  }
}
