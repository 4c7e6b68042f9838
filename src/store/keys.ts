/**
 * Every Redis key Genway writes, in one place, under one namespace (`store.prefix`).
 * Lua scripts receive these names through KEYS, never build them.
 */
export function redisKeys(prefix: string) {
  const p = `${prefix}:`;
  return {
    /** hash: name, createdAt, balance (integer micro-USD) */
    account: (accountId: string) => `${p}account:${accountId}`,
    /** set of keyIds */
    accountKeys: (accountId: string) => `${p}account:${accountId}:keys`,
    /** list of JSON LedgerEntry, append-only */
    ledger: (accountId: string) => `${p}account:${accountId}:ledger`,
    /** hash `${kind}:${reference}` -> JSON LedgerEntry (idempotency of postings) */
    ledgerRefs: (accountId: string) => `${p}account:${accountId}:ledger-refs`,
    /** string: JSON KeyRecord, found by the hash of the presented key */
    keyByHash: (hash: string) => `${p}keyhash:${hash}`,
    /** string: the hash of key `keyId` (index for admin lookups and revocation) */
    keyHashOf: (keyId: string) => `${p}key:${keyId}`,
    /**
     * stream of "key changed" events (fields seq, type, hash, keyId), appended only through key_events.lua in the
     * script that changes the key; every replica's key gate follows it (src/store/redis/key-events.ts)
     */
    keyEvents: `${p}key-events`,
    /** hash: tokens, ts (token bucket) */
    rateLimit: (bucketId: string) => `${p}ratelimit:${bucketId}`,
    /** string: JSON TaskRecord */
    task: (taskId: string) => `${p}task:${taskId}`,
    /** string: JSON BatchRecord, expires with the batch */
    batch: (batchId: string) => `${p}batch:${batchId}`,
    /** string: batchId, or the in-flight marker while the first request with this Idempotency-Key runs */
    batchIdempotencyKey: (accountId: string, keyHash: string) => `${p}batch-key:${accountId}:${keyHash}`,
    /** string: taskId bound to an item idempotency_key (account-level), expires with its batch */
    itemIdempotencyKey: (accountId: string, keyHash: string) => `${p}item-key:${accountId}:${keyHash}`,
    /** hash: `v:<n>` -> JSON SecretVersion (ciphertext only), current, max, revokedAt */
    webhookSecrets: (accountId: string) => `${p}account:${accountId}:webhook-secrets`,
    /** hash `${model}\u0000${field}` -> integer (gateway token usage of one key) */
    keyUsage: (keyId: string) => `${p}key:${keyId}:usage`,
    /** string: JSON ObjectOwner of a vendor object made through the gateway, expires with gateway.objectTtlMs */
    vendorObject: (vendor: string, id: string) => `${p}gw-object:${vendor}:${id}`,
    /** prefix handed to BullMQ for its queues */
    bullPrefix: `${prefix}:bull`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
