import type { KeyCooldown, VendorKeyHealth } from '../../gateway/key-health';
import type { RedisKeys } from '../keys';
import type { RedisClient } from './connection';
import { LuaScript } from './scripts';

const cooldowns = new LuaScript('vendor_key_cooldowns');

/**
 * Clustered mode: the cooldowns of every replica in one small hash (`vendorKeyCooldowns`, bounded by the configured
 * keys). Times cross Redis as durations, measured on Redis's clock, so replicas need not agree on the time of day.
 */
export class RedisVendorKeyHealth implements VendorKeyHealth {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly now: () => number = Date.now,
  ) {}

  async coolDown({ vendor, keyId, until }: KeyCooldown): Promise<void> {
    const ms = Math.max(0, Math.ceil(until - this.now()));
    if (ms > 0) await this.run([`${vendor}:${keyId}`, ms]);
  }

  async cooling(): Promise<KeyCooldown[]> {
    return this.run([]);
  }

  private async run(args: (string | number)[]): Promise<KeyCooldown[]> {
    const reply = (await cooldowns.run(this.redis, [this.keys.vendorKeyCooldowns], args)) as (
      | string
      | number
    )[];
    const now = this.now();
    const out: KeyCooldown[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const field = String(reply[i]);
      const at = field.indexOf(':');
      out.push({
        vendor: field.slice(0, at),
        keyId: field.slice(at + 1),
        until: now + Number(reply[i + 1]),
      });
    }
    return out;
  }
}
