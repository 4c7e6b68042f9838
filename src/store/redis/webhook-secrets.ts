import type { SecretVersion, WebhookSecretStore } from '../../webhooks/store';
import type { RedisKeys } from '../keys';
import type { RedisClient } from './connection';
import { LuaScript } from './scripts';

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
