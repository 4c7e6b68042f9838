import { RedisBatchStore } from './batches';
import { RedisDeliveryLog } from './delivery-log';
import { RedisTaskEvents } from './task-events';
import { RedisTaskStore } from './tasks';
import { RedisWebhookSecretStore } from './webhook-secrets';
import { redisKeys } from '../keys';
import type { Store, StoreOptions } from '../types';
import { RedisUsageStore } from './usage';
import { RedisRecentStats } from './recent-stats';
import { RedisVendorObjectStore } from './vendor-objects';
import { RedisVendorKeyHealth } from './vendor-key-health';
import { RedisAccountStore } from './accounts';
import { createRedisConnection, isClusterTarget, type RedisClient, type RedisTarget } from './connection';
import { RedisKeyGate } from './key-gate';

export {
  createRedisConnection,
  isClusterTarget,
  redisTarget,
  type RedisClient,
  type RedisTarget,
} from './connection';

export function createRedisStore(
  url: RedisTarget,
  prefix: string,
  options: StoreOptions,
): Store & { readonly redis: RedisClient; readonly keyGate: RedisKeyGate } {
  const redis = createRedisConnection(url, 'genway');
  const keys = redisKeys(prefix, isClusterTarget(url));
  // The key gate follows the key-event stream on a connection of its own (blocking reads), opened on first use.
  const keyGate = new RedisKeyGate(redis, keys, (feedOptions) =>
    createRedisConnection(url, 'genway-key-events', feedOptions),
  );
  const taskEvents = new RedisTaskEvents(redis, keys.taskEvents, () =>
    createRedisConnection(url, 'genway-task-events'),
  );
  return {
    kind: 'redis',
    redis,
    accounts: new RedisAccountStore(
      redis,
      keys,
      (hash) => keyGate.keyChanged(hash),
      options.ledgerRetentionMs,
      options.usageDayRetentionMs,
    ),
    keyGate,
    batches: new RedisBatchStore(redis, keys),
    tasks: new RedisTaskStore(
      redis,
      keys,
      options.taskRetentionMs,
      options.ledgerRetentionMs,
      options.usageDayRetentionMs,
    ),
    taskEvents,
    webhookSecrets: new RedisWebhookSecretStore(redis, keys),
    deliveryLog: new RedisDeliveryLog(redis, keys),
    usage: new RedisUsageStore(redis, keys),
    vendorObjects: new RedisVendorObjectStore(redis, keys),
    vendorKeyHealth: new RedisVendorKeyHealth(redis, keys),
    recentStats: new RedisRecentStats(redis, keys),
    ping: async () => {
      await redis.ping();
    },
    close: async () => {
      await keyGate.close();
      await taskEvents.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
