import type { RedisClient } from '../store/redis/connection';
import type { RedisKeys } from '../store/keys';
import { LuaScript } from '../store/redis/scripts';

export interface SecretVersion {
  version: number;
  /** The secret, encrypted (never stored in clear). */
  ciphertext: string;
  createdAt: number;
  /** When a rotation superseded it; it still signs its batches for the grace period. */
  retiredAt?: number;
  revokedAt?: number;
}

export interface WebhookSecretStore {
  /** The current version, created with `ciphertext` when the account has none (first use, or after a revoke). */
  current(accountId: string, ciphertext: string, at: number): Promise<SecretVersion>;
  /** Retires the current version (if any) and makes a new one current. */
  rotate(accountId: string, ciphertext: string, at: number): Promise<SecretVersion>;
  /** Revokes every version; the next `current` creates a higher one. Returns the highest version so far. */
  revoke(accountId: string, at: number): Promise<number>;
  get(accountId: string, version: number): Promise<SecretVersion | null>;
  /** When the account last revoked its secrets, if ever. */
  revokedAt(accountId: string): Promise<number | null>;
}

interface AccountSecrets {
  versions: Map<number, SecretVersion>;
  current?: number;
  max: number;
  revokedAt?: number;
}

export class MemoryWebhookSecretStore implements WebhookSecretStore {
  private readonly accounts = new Map<string, AccountSecrets>();

  private of(accountId: string): AccountSecrets {
    let state = this.accounts.get(accountId);
    if (!state) this.accounts.set(accountId, (state = { versions: new Map(), max: 0 }));
    return state;
  }

  private create(state: AccountSecrets, ciphertext: string, at: number): SecretVersion {
    const record = { version: ++state.max, ciphertext, createdAt: at };
    state.versions.set(record.version, record);
    state.current = record.version;
    return { ...record };
  }

  async current(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    const state = this.of(accountId);
    if (state.current !== undefined) return { ...state.versions.get(state.current)! };
    return this.create(state, ciphertext, at);
  }

  async rotate(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    const state = this.of(accountId);
    if (state.current !== undefined) state.versions.get(state.current)!.retiredAt = at;
    return this.create(state, ciphertext, at);
  }

  async revoke(accountId: string, at: number): Promise<number> {
    const state = this.of(accountId);
    for (const v of state.versions.values()) v.revokedAt ??= at;
    state.current = undefined;
    state.revokedAt = at;
    return state.max;
  }

  async get(accountId: string, version: number): Promise<SecretVersion | null> {
    const v = this.accounts.get(accountId)?.versions.get(version);
    return v ? { ...v } : null;
  }

  async revokedAt(accountId: string): Promise<number | null> {
    return this.accounts.get(accountId)?.revokedAt ?? null;
  }
}

const currentScript = new LuaScript('webhook_secret_current');
const rotateScript = new LuaScript('webhook_secret_rotate');
const revokeScript = new LuaScript('webhook_secret_revoke');

/** One hash per account: `v:<n>` -> JSON version, `current`, `max`, `revokedAt`; every change is one Lua step. */
export class RedisWebhookSecretStore implements WebhookSecretStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async current(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    return JSON.parse(
      (await currentScript.run(
        this.redis,
        [this.keys.webhookSecrets(accountId)],
        [ciphertext, at],
      )) as string,
    );
  }

  async rotate(accountId: string, ciphertext: string, at: number): Promise<SecretVersion> {
    return JSON.parse(
      (await rotateScript.run(this.redis, [this.keys.webhookSecrets(accountId)], [ciphertext, at])) as string,
    );
  }

  async revoke(accountId: string, at: number): Promise<number> {
    return Number(await revokeScript.run(this.redis, [this.keys.webhookSecrets(accountId)], [at]));
  }

  async get(accountId: string, version: number): Promise<SecretVersion | null> {
    const json = await this.redis.hget(this.keys.webhookSecrets(accountId), `v:${version}`);
    return json ? (JSON.parse(json) as SecretVersion) : null;
  }

  async revokedAt(accountId: string): Promise<number | null> {
    const at = await this.redis.hget(this.keys.webhookSecrets(accountId), 'revokedAt');
    return at === null ? null : Number(at);
  }
}
