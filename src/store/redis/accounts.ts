import type { RedisClient } from './connection';
import type { RedisKeys } from '../keys';
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
  dayOf,
  monthOf,
  packBudget,
  unpackRow,
  type Budget,
  type BudgetEvent,
  type BudgetScope,
  type BudgetState,
  type Dimension,
  type RollupRead,
  type RollupRow,
  type UsageDelta,
} from '../../accounts/usage';
import { KEY_EVENTS_MAXLEN } from './key-events';
import { LuaScript } from './scripts';

const ledgerPost = new LuaScript('ledger_post');
const keyRevoke = new LuaScript('key_revoke');
const accountUpdate = new LuaScript('account_update');
const keyTouch = new LuaScript('key_touch');
const keyExpire = new LuaScript('key_expire');
const usageAdd = new LuaScript('usage_add');
const budgetStatesScript = new LuaScript('budget_states');
const budgetSet = new LuaScript('budget_set');

/** The fields of a key's hash besides its immutable record, in the order they are read. */
const KEY_FIELDS = ['record', 'revokedAt', 'expiresAt', 'lastUsedAt'] as const;

/** An account hash's fields as HMGET name, createdAt, webhookScheme, budgetWebhookUrl answers them. */
function accountFrom(
  accountId: string,
  [name, createdAt, scheme, budgetWebhookUrl]: (string | null)[],
): AccountRecord | null {
  if (name === null || name === undefined) return null;
  return {
    accountId,
    name,
    createdAt: Number(createdAt),
    webhookScheme: scheme === 'standard' ? 'standard' : 'genway',
    ...(budgetWebhookUrl ? { budgetWebhookUrl } : {}),
  };
}

const numberOrNull = (v: string | null | undefined) => (v ? Number(v) : null);

/**
 * A key is stored as an immutable JSON record plus separate fields for what changes (revokedAt, expiresAt,
 * lastUsedAt), read together (KEY_FIELDS order). Records written before a field existed read it as null.
 */
function keyFromHash([record, revokedAt, expiresAt, lastUsedAt]: (string | null)[]): KeyRecord | null {
  if (!record) return null;
  const stored = JSON.parse(record) as Partial<KeyRecord>;
  return {
    ...(stored as KeyRecord),
    prefix: stored.prefix ?? null,
    metadata: stored.metadata ?? null,
    rotatedFrom: stored.rotatedFrom ?? null,
    revokedAt: numberOrNull(revokedAt),
    expiresAt: numberOrNull(expiresAt),
    lastUsedAt: numberOrNull(lastUsedAt),
  };
}

/** The `at` before which ledger entries are dropped as one is posted at `at` ('' = never: the scripts skip trimming). */
export function ledgerCutoff(at: number, retentionMs: number): string {
  return Number.isFinite(retentionMs) ? String(at - retentionMs) : '';
}

/** The six rollup hashes a write at `at` touches: day total, models, keys; month total, models, keys. */
function rollupKeys(keys: RedisKeys, accountId: string, at: number): string[] {
  const day = dayOf(at);
  const month = monthOf(at);
  return [
    keys.usage(accountId, 'd', day, 't'),
    keys.usage(accountId, 'd', day, 'm'),
    keys.usage(accountId, 'd', day, 'k'),
    keys.usage(accountId, 'm', month, 't'),
    keys.usage(accountId, 'm', month, 'm'),
    keys.usage(accountId, 'm', month, 'k'),
  ];
}

/** A posting script's keys after the ledger's (the budgets, then the rollups of `at`; usage_lib.lua). */
export function postingUsageKeys(keys: RedisKeys, accountId: string, at: number): string[] {
  return [keys.budgets(accountId), ...rollupKeys(keys, accountId, at)];
}

/** A posting script's trailing arguments: the day and month of `at`, and how long day rows are kept. */
export function postingUsageArgs(at: number, dayRetentionMs: number): string[] {
  return [dayOf(at), monthOf(at), String(dayRetentionMs)];
}

export function parsePostReply(reply: unknown): PostResult {
  const [status, payload] = reply as [string, string | undefined];
  switch (status) {
    case 'applied': {
      const events = (reply as string[])[2];
      return {
        status,
        entry: JSON.parse(payload!) as LedgerEntry,
        ...(events ? { budgetEvents: JSON.parse(events) as BudgetEvent[] } : {}),
      };
    }
    case 'duplicate':
      return { status, entry: JSON.parse(payload!) as LedgerEntry };
    case 'over_budget':
      return { status, budget: JSON.parse(payload!) as BudgetState };
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
    private readonly usageDayRetentionMs = 0,
  ) {}

  async createAccount(account: AccountRecord): Promise<void> {
    await this.redis.hset(this.keys.account(account.accountId), {
      name: account.name,
      createdAt: account.createdAt,
      webhookScheme: account.webhookScheme,
      balance: 0,
    });
    // Another slot in a cluster: a separate write (an account missing here is only missing from the list).
    await this.redis.sadd(this.keys.accounts, account.accountId);
  }

  async listAccounts(): Promise<AccountSummary[]> {
    const ids = await this.redis.smembers(this.keys.accounts);
    const rows = await Promise.all(
      ids.map(async (accountId) => {
        const [name, createdAt, balance] = await this.redis.hmget(
          this.keys.account(accountId),
          'name',
          'createdAt',
          'balance',
        );
        return name === null
          ? null
          : { accountId, name, createdAt: Number(createdAt), balanceMicros: Number(balance ?? 0) };
      }),
    );
    return rows.filter((r): r is AccountSummary => r !== null).sort((a, b) => a.createdAt - b.createdAt);
  }

  async getAccount(accountId: string): Promise<AccountRecord | null> {
    const fields = await this.redis.hmget(
      this.keys.account(accountId),
      'name',
      'createdAt',
      'webhookScheme',
      'budgetWebhookUrl',
    );
    return accountFrom(accountId, fields);
  }

  async updateAccount(accountId: string, patch: AccountPatch): Promise<AccountRecord | null> {
    const args = Object.entries(patch).flatMap(([field, value]) =>
      value === undefined ? [] : [field, value ?? ''],
    );
    const reply = (await accountUpdate.run(this.redis, [this.keys.account(accountId)], args)) as (
      | string
      | null
    )[];
    return accountFrom(accountId, reply);
  }

  async insertKey(key: KeyRecord): Promise<void> {
    const { revokedAt: _revoked, expiresAt, lastUsedAt: _used, ...record } = key;
    await this.redis
      .multi()
      .hset(this.keys.keyByHash(key.hash), {
        record: JSON.stringify(record),
        ...(expiresAt === null ? {} : { expiresAt }),
      })
      .set(this.keys.keyHashOf(key.keyId), key.hash)
      .sadd(this.keys.accountKeys(key.accountId), key.keyId)
      .exec();
  }

  async findKeyByHash(hash: string): Promise<KeyRecord | null> {
    return keyFromHash(await this.redis.hmget(this.keys.keyByHash(hash), ...KEY_FIELDS));
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
    const fields = (await keyRevoke.run(
      this.redis,
      [this.keys.keyByHash(hash), this.keys.keyEvents],
      [at, hash, keyId, KEY_EVENTS_MAXLEN],
    )) as (string | null)[];
    this.keyChanged(hash);
    return keyFromHash(fields);
  }

  async expireKey(keyId: string, expiresAt: number): Promise<KeyRecord | null> {
    const hash = await this.redis.get(this.keys.keyHashOf(keyId));
    if (!hash) return null;
    const fields = (await keyExpire.run(
      this.redis,
      [this.keys.keyByHash(hash), this.keys.keyEvents],
      [expiresAt, hash, keyId, KEY_EVENTS_MAXLEN],
    )) as (string | null)[];
    this.keyChanged(hash);
    return keyFromHash(fields);
  }

  async touchKey(hash: string, at: number): Promise<void> {
    await keyTouch.run(this.redis, [this.keys.keyByHash(hash)], [at]);
  }

  async setBudget(accountId: string, scope: BudgetScope, budget: Budget | null): Promise<void> {
    await budgetSet.run(
      this.redis,
      [this.keys.budgets(accountId)],
      [scope, budget ? packBudget(budget) : ''],
    );
  }

  async budgetStates(accountId: string, at: number): Promise<BudgetState[]> {
    const reply = (await budgetStatesScript.run(
      this.redis,
      [this.keys.budgets(accountId), ...this.rollupKeys(accountId, at)],
      [dayOf(at), monthOf(at), at],
    )) as string;
    return JSON.parse(reply) as BudgetState[];
  }

  private rollupKeys(accountId: string, at: number): string[] {
    return rollupKeys(this.keys, accountId, at);
  }

  async addUsage(delta: UsageDelta): Promise<void> {
    await usageAdd.run(this.redis, this.rollupKeys(delta.accountId, delta.at), [
      delta.model,
      delta.keyId,
      this.usageDayRetentionMs,
      ...delta.counts,
    ]);
  }

  async readUsage(
    accountId: string,
    dimension: Dimension,
    reads: RollupRead[],
  ): Promise<Map<string, RollupRow>[]> {
    const replies = await Promise.all(
      reads.map(({ grain, stamp }) =>
        this.redis.hgetall(this.keys.usage(accountId, grain, stamp, dimension)),
      ),
    );
    return replies.map((raw) => {
      const rows = new Map<string, RollupRow>();
      for (const name in raw) rows.set(name, unpackRow(raw[name]));
      return rows;
    });
  }

  async balanceMicros(accountId: string): Promise<number | null> {
    const [name, balance] = await this.redis.hmget(this.keys.account(accountId), 'name', 'balance');
    return name === null ? null : Number(balance ?? 0);
  }

  async post(request: PostRequest): Promise<PostResult> {
    const { accountId, usage, at } = request;
    const reply = await ledgerPost.run(
      this.redis,
      [
        this.keys.account(accountId),
        this.keys.ledger(accountId),
        this.keys.ledgerRefs(accountId),
        ...postingUsageKeys(this.keys, accountId, at),
      ],
      [
        accountId,
        request.kind,
        request.amountMicros,
        request.reference,
        at,
        request.atMost ? '1' : '0',
        ledgerCutoff(at, this.ledgerRetentionMs),
        usage?.keyId ?? '',
        usage?.model ?? '',
        usage?.source ?? '',
        request.enforceBudgets ? '1' : '0',
        ...postingUsageArgs(at, this.usageDayRetentionMs),
      ],
    );
    return parsePostReply(reply);
  }

  async ledger(accountId: string): Promise<LedgerEntry[]> {
    const entries = await this.redis.lrange(this.keys.ledger(accountId), 0, -1);
    return entries.map((e) => JSON.parse(e) as LedgerEntry);
  }
}
