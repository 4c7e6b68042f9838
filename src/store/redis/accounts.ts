import type { RedisClient } from './connection';
import type { RedisKeys } from '../keys';
import type {
  AccountPatch,
  AccountRecord,
  AccountStore,
  KeyRecord,
  LedgerEntry,
  PostRequest,
  PostResult,
} from '../../accounts/store';
import { KEY_EVENTS_MAXLEN } from './key-events';
import { LuaScript } from './scripts';

const ledgerPost = new LuaScript('ledger_post');
const keyRevoke = new LuaScript('key_revoke');
const accountUpdate = new LuaScript('account_update');

/** An account hash's fields as HMGET name, createdAt, webhookScheme answers them. */
function accountFrom(accountId: string, [name, createdAt, scheme]: (string | null)[]): AccountRecord | null {
  if (name === null || name === undefined) return null;
  return {
    accountId,
    name,
    createdAt: Number(createdAt),
    webhookScheme: scheme === 'standard' ? 'standard' : 'genway',
  };
}

/** A key is stored as an immutable JSON record plus a separate revokedAt field, read together. */
function keyFromHash(record: string | null, revokedAt: string | null): KeyRecord | null {
  if (!record) return null;
  const key = JSON.parse(record) as KeyRecord;
  key.revokedAt = revokedAt ? Number(revokedAt) : null;
  return key;
}

/** The `at` before which ledger entries are dropped as one is posted at `at` ('' = never: the scripts skip trimming). */
export function ledgerCutoff(at: number, retentionMs: number): string {
  return Number.isFinite(retentionMs) ? String(at - retentionMs) : '';
}

export function parsePostReply(reply: unknown): PostResult {
  const [status, payload] = reply as [string, string | undefined];
  switch (status) {
    case 'applied':
    case 'duplicate':
      return { status, entry: JSON.parse(payload!) as LedgerEntry };
    case 'insufficient_balance':
      return { status, balanceMicros: Number(payload) };
    case 'unknown_account':
      return { status };
    default:
      throw new Error(`ledger script answered ${String(status)}`);
  }
}

export class RedisAccountStore implements AccountStore {
  /**
   * @param keyChanged told of every key this store changes (revokes), so this replica's key gate drops what it
   *   holds at once instead of when the key event comes back through the stream
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly keyChanged: (hash: string) => void = () => undefined,
    private readonly ledgerRetentionMs = Infinity,
  ) {}

  async createAccount(account: AccountRecord): Promise<void> {
    await this.redis.hset(this.keys.account(account.accountId), {
      name: account.name,
      createdAt: account.createdAt,
      webhookScheme: account.webhookScheme,
      balance: 0,
    });
  }

  async getAccount(accountId: string): Promise<AccountRecord | null> {
    const fields = await this.redis.hmget(this.keys.account(accountId), 'name', 'createdAt', 'webhookScheme');
    return accountFrom(accountId, fields);
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | null> {
    const args = Object.entries(patch).flatMap(([field, value]) =>
      value === undefined ? [] : [field, value],
    );
    const reply = (await accountUpdate.run(this.redis, [this.keys.account(accountId)], args)) as (
      | string
      | null
    )[];
    return accountFrom(accountId, reply);
  }

  async insertKey(key: KeyRecord): Promise<void> {
    const { revokedAt: _revoked, ...record } = key;
    await this.redis
      .multi()
      .hset(this.keys.keyByHash(key.hash), { record: JSON.stringify(record) })
      .set(this.keys.keyHashOf(key.keyId), key.hash)
      .sadd(this.keys.accountKeys(key.accountId), key.keyId)
      .exec();
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    const [record, revokedAt] = await this.redis.hmget(this.keys.keyByHash(hash), 'record', 'revokedAt');
    return keyFromHash(record, revokedAt);
  }

  async getKey(keyId: string): Promise<KeyRecord | null> {
    const hash = await this.redis.get(this.keys.keyHashOf(keyId));
    return hash ? this.findKeyByHash(hash) : null;
  }

  async listKeys(accountId: string): Promise<KeyRecord[]> {
    const ids = await this.redis.smembers(this.keys.accountKeys(accountId));
    const keys = await Promise.all(ids.map((id) => this.getKey(id)));
    return keys.filter((k): k is KeyRecord => k !== null).sort((a, b) => a.createdAt - b.createdAt);
  }

  async revokeKey(keyId: string, at: number): Promise<KeyRecord | null> {
    const hash = await this.redis.get(this.keys.keyHashOf(keyId));
    if (!hash) return null;
    const [record, revokedAt] = (await keyRevoke.run(
      this.redis,
      [this.keys.keyByHash(hash), this.keys.keyEvents],
      [at, hash, keyId, KEY_EVENTS_MAXLEN],
    )) as [string | null, string | null];
    this.keyChanged(hash);
    return keyFromHash(record ?? null, revokedAt ?? null);
  }

  async balanceMicros(accountId: string): Promise<number | null> {
    const [name, balance] = await this.redis.hmget(this.keys.account(accountId), 'name', 'balance');
    return name === null ? null : Number(balance ?? 0);
  }

  async post(request: PostRequest): Promise<PostResult> {
    const { accountId } = request;
    const reply = await ledgerPost.run(
      this.redis,
      [this.keys.account(accountId), this.keys.ledger(accountId), this.keys.ledgerRefs(accountId)],
      [
        accountId,
        request.kind,
        request.amountMicros,
        request.reference,
        request.at,
        request.atMost ? '1' : '0',
        ledgerCutoff(request.at, this.ledgerRetentionMs),
      ],
    );
    return parsePostReply(reply);
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    const entries = await this.redis.lrange(this.keys.ledger(accountId), 0, -1);
    return entries.map((e) => JSON.parse(e) as LedgerEntry);
  }
}
