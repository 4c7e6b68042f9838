/** One vendor key's cooldown: skipped until `until` (epoch ms). */
export interface KeyCooldown {
  /** The upstream whose pool it is in (`anthropic`, or a `gateway.upstreams` id). */
  vendor: string;
  /** The key's id (`VendorKey.id`), never the key. */
  keyId: string;
  until: number;
}

/**
 * Cooldowns of vendor keys, as every replica sees them: the memory store keeps them in this process, the Redis store
 * shares them between replicas. Requests never wait on it: each replica writes a cooldown when one of its keys fails
 * and reads the others' in the background (src/gateway/key-pool.ts).
 */
export interface VendorKeyHealth {
  /** Records a cooldown; one that ends earlier than the one held changes nothing. */
  coolDown(cooldown: KeyCooldown): Promise<void>;
  /** The cooldowns that have not ended. */
  cooling(): Promise<KeyCooldown[]>;
}
