import { accountTag, idTag } from '../ids';

/**
 * Every Redis key Genway writes, in one place, under one namespace (`store.prefix`).
 * Lua scripts receive these names through KEYS, never build them.
 *
 * In Redis Cluster (`cluster`), every key a script or transaction touches together carries one hash tag, so it is on
 * one slot: `{<account tag>}` for an account's balance, ledger, secrets and idempotency keys and for its tasks and
 * batches (their ids carry the account's tag: src/ids.ts), `{keys}` for API keys, their rate buckets and the
 * key-event stream. On one Redis (direct or Sentinel) the names are the ones Genway has always used, so an existing
 * deployment's data stays where it is.
 */
export function redisKeys(prefix: string, cluster = false) {
  const p = `${prefix}:`;
  /** Where an account's keys start: `prefix:{tag}:` in a cluster, `prefix:` otherwise. */
  const ofAccount = cluster ? (accountId: string) => `${p}{${accountTag(accountId)}}:` : () => p;
  /** Where the keys of a task or batch start, from its id alone. */
  const ofOwned = cluster ? (id: string) => `${p}{${idTag(id)}}:` : () => p;
  const ofKeys = cluster ? `${p}{keys}:` : p;
  return {
    /** hash: name, createdAt, balance (integer micro-USD) */
    account: (accountId: string) => `${ofAccount(accountId)}account:${accountId}`,
    /** set of keyIds */
    accountKeys: (accountId: string) => `${ofKeys}account:${accountId}:keys`,
    /** set of every accountId (the admin's account list) */
    accounts: `${p}accounts`,
    /**
     * hash: one usage rollup of an account (src/accounts/usage.ts): grain `d` (day) or `m` (month), `stamp` the
     * period, dimension `t` (field `t`), `m` (field = model) or `k` (field = keyId) -> packed counters
     */
    usage: (accountId: string, grain: 'd' | 'm', stamp: string, dimension: 't' | 'm' | 'k') =>
      `${ofAccount(accountId)}usage:${accountId}:${grain}:${stamp}:${dimension}`,
    /** hash: `account` | `key:<keyId>` -> packed budget; `fired:<scope>` -> `<stamp>:<level>` raised */
    budgets: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:budgets`,
    /** list of JSON LedgerEntry, append-only */
    ledger: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:ledger`,
    /** hash `${kind}:${reference}` -> JSON LedgerEntry (idempotency of postings) */
    ledgerRefs: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:ledger-refs`,
    /** string: JSON KeyRecord, found by the hash of the presented key */
    keyByHash: (hash: string) => `${ofKeys}keyhash:${hash}`,
    /** string: the hash of key `keyId` (index for admin lookups and revocation) */
    keyHashOf: (keyId: string) => `${ofKeys}key:${keyId}`,
    /**
     * stream of "key changed" events (fields seq, type, hash, keyId), appended only through key_events.lua in the
     * script that changes the key; every replica's key gate follows it (src/store/redis/key-events.ts)
     */
    keyEvents: `${ofKeys}key-events`,
    /** hash: tokens, ts (token bucket); read with the key's record in one script */
    rateLimit: (bucketId: string) => `${ofKeys}ratelimit:${bucketId}`,
    /** pub/sub channel: ids of tasks that just became terminal (wakes `Prefer: wait` waiters on every replica) */
    taskEvents: `${p}task-events`,
    /** string: JSON TaskRecord */
    task: (taskId: string) => `${ofOwned(taskId)}task:${taskId}`,
    /** sorted set (scores 0, by lex) of `<createTime>:<taskId>`: the account's task list (src/listing.ts) */
    taskIndex: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:tasks`,
    /** sorted set (scores 0, by lex) of `<createdAt>:<batchId>`: the account's batch list */
    batchIndex: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:batches`,
    /** string: JSON DeliveryAttempt of one webhook or callback attempt, expires with the delivery log's retention */
    delivery: (deliveryId: string) => `${ofOwned(deliveryId)}delivery:${deliveryId}`,
    /** sorted set (scores 0, by lex) of `<at>:<deliveryId>`: the account's delivery log */
    deliveryIndex: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:deliveries`,
    /** string: JSON BatchRecord, expires with the batch */
    batch: (batchId: string) => `${ofOwned(batchId)}batch:${batchId}`,
    /** string: batchId, or the in-flight marker while the first request with this Idempotency-Key runs */
    batchIdempotencyKey: (accountId: string, keyHash: string) =>
      `${ofAccount(accountId)}batch-key:${accountId}:${keyHash}`,
    /** string: taskId bound to an item idempotency_key (account-level), expires with its batch */
    itemIdempotencyKey: (accountId: string, keyHash: string) =>
      `${ofAccount(accountId)}item-key:${accountId}:${keyHash}`,
    /** hash: `v:<n>` -> JSON SecretVersion (ciphertext only), current, max, revokedAt */
    webhookSecrets: (accountId: string) => `${ofAccount(accountId)}account:${accountId}:webhook-secrets`,
    /** hash `${model}\u0000${field}` -> integer (gateway token usage of one key) */
    keyUsage: (keyId: string) => `${p}key:${keyId}:usage`,
    /** string: JSON ObjectOwner of a vendor object made through the gateway, expires with gateway.objectTtlMs */
    vendorObject: (vendor: string, id: string) => `${p}gw-object:${vendor}:${id}`,
    /** hash `vendor:keyId` -> until (epoch ms, Redis's clock): vendor keys in cooldown, shared by every replica */
    vendorKeyCooldowns: `${p}gw-key-cooldowns`,
    /** hash `<surface>:<field>` -> count: one minute of request stats (epoch minutes), one slot for all minutes */
    recentStats: (minute: number) => `${cluster ? `${p}{stats}:` : p}stats:${minute}`,
    /** prefix handed to BullMQ for its queues (in a cluster, one hash tag: BullMQ's scripts touch several keys) */
    bullPrefix: cluster ? `{${prefix}:bull}` : `${prefix}:bull`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
