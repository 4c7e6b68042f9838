import { RedisBatchStore } from '../../batches/redis-store';
import { RedisTaskStore } from '../../tasks/redis-store';
import { RedisWebhookSecretStore } from '../../webhooks/secret-store';
import { redisKeys } from '../keys';
import type { Store, StoreOptions } from '../types';
import { RedisUsageStore } from '../usage';
import { RedisVendorObjectStore } from '../vendor-objects';
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
  return {
    kind: 'redis',
    redis,
    accounts: new RedisAccountStore(
      redis,
      keys,
      (hash) => keyGate.keyChanged(hash),
      options.ledgerRetentionMs,
    ),
    keyGate,
    batches: new RedisBatchStore(redis, keys),
    tasks: new RedisTaskStore(redis, keys, options.taskRetentionMs, options.ledgerRetentionMs),
    webhookSecrets: new RedisWebhookSecretStore(redis, keys),
    usage: new RedisUsageStore(redis, keys),
    vendorObjects: new RedisVendorObjectStore(redis, keys),
    ping: async () => {
      await redis.ping();
    },
    close: async () => {
      await keyGate.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
