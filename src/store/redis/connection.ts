import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { SlotMasterConnector } from './slot-master';

/**
 * Where Redis is: a URL; sentinels that name the master; or the seed nodes of a Redis Cluster. In the last two the
 * URL gives only the password, database and TLS.
 */
export type RedisTarget =
  | string
  | { url: string; sentinels: string[]; sentinelName: string }
  | { url: string; clusterNodes: string[] };

/** A connection to one Redis (direct or through sentinels) or to a Redis Cluster: the commands Genway uses are the same. */
export type RedisClient = Redis | Cluster;

export function redisTarget(store: {
  redisUrl?: string;
  sentinels: string[];
  sentinelName: string;
  clusterNodes: string[];
}): RedisTarget {
  if (!store.redisUrl) throw new Error('redisTarget without store.redisUrl');
  if (store.clusterNodes.length) return { url: store.redisUrl, clusterNodes: store.clusterNodes };
  return store.sentinels.length
    ? { url: store.redisUrl, sentinels: store.sentinels, sentinelName: store.sentinelName }
    : store.redisUrl;
}

/** Whether `target` is a Redis Cluster: its keys are then laid out by hash slot (src/store/keys.ts). */
export function isClusterTarget(target: RedisTarget): target is { url: string; clusterNodes: string[] } {
  return typeof target !== 'string' && 'clusterNodes' in target;
}

function hostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}

/** Password, user and TLS from the URL (the only parts of it that sentinel and cluster modes use). */
function credentials(url: URL): RedisOptions {
  return {
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** The sentinel form of `target` as ioredis options: the master is looked up through the sentinels, and followed. */
function sentinelOptions(target: { url: string; sentinels: string[]; sentinelName: string }): RedisOptions {
  const url = new URL(target.url);
  return {
    sentinels: target.sentinels.map(hostPort),
    name: target.sentinelName,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    ...credentials(url),
    ...(url.protocol === 'rediss:' ? { enableTLSForSentinelMode: true } : {}),
  };
}

/**
 * Cluster mode: the seed nodes give the slot map, which ioredis follows through MOVED/ASK and refreshes after a
 * failover. A command to a slot whose master is down is retried (CLUSTERDOWN, a refused connection) while a replica
 * takes over: Redis promotes one after cluster-node-timeout, so that has to be shorter than the retries here last.
 */
function clusterConnection(target: { url: string; clusterNodes: string[] }, node: RedisOptions): Cluster {
  const options: ClusterOptions = {
    redisOptions: { ...credentials(new URL(target.url)), ...node },
    retryDelayOnFailover: 200,
    retryDelayOnClusterDown: 200,
    retryDelayOnTryAgain: 100,
    // Each redirection or retry of one command counts: 50 × 200 ms rides through a failover of about 10 s.
    maxRedirections: 50,
    slotsRefreshTimeout: 2000,
    // A connection with nothing to send but a blocked read (the key-event feed) learns the new slot map within a
    // second of a failover rather than at its next error. (BullMQ does not use a Cluster client: createSlotConnection.)
    slotsRefreshInterval: 1000,
    clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
  };
  return new Cluster(target.clusterNodes.map(hostPort), options);
}

export function createRedisConnection(
  target: RedisTarget,
  name: string,
  options: RedisOptions = {},
): RedisClient {
  const common = commonOptions(name, options);
  if (typeof target === 'string') return new Redis(target, common);
  if (isClusterTarget(target)) return clusterConnection(target, common);
  return new Redis({ ...sentinelOptions(target), ...common });
}

/**
 * A plain connection to the master of the slot `key` hashes to, when `target` is a Redis Cluster (found again at
 * every reconnect: src/store/redis/slot-master.ts); otherwise the same connection as createRedisConnection. For a
 * user whose keys share one hash tag and that must never be left on a dead master (BullMQ).
 */
export function createSlotConnection(
  target: RedisTarget,
  key: string,
  name: string,
  options: RedisOptions = {},
): RedisClient {
  if (!isClusterTarget(target)) return createRedisConnection(target, name, options);
  return new Redis({
    ...credentials(new URL(target.url)),
    ...commonOptions(name, options),
    // A node that stopped serving the slot (demoted, or the slot moved): reconnect, find the master, resend.
    reconnectOnError: (err: Error) => (/^(READONLY|MOVED)/.test(err.message) ? 2 : false),
    Connector: SlotMasterConnector,
    slotMaster: { seeds: target.clusterNodes.map(hostPort), key },
  } as RedisOptions);
}

function commonOptions(name: string, options: RedisOptions): RedisOptions {
  return {
    connectionName: name,
    // After a failover the old master answers READONLY until the client follows the new one: reconnect and resend.
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    // A command waits through this many reconnect attempts (50 ms, 100 ms ... : about 2.7 s in all), so a Redis
    // restart or failover that short is a slower request, not a failed one; past it the request is a 503. Commands
    // sent but unanswered when the connection dropped are sent again: every script that moves money or writes a
    // task is idempotent.
    maxRetriesPerRequest: 10,
    lazyConnect: false,
    // No enableAutoPipelining: measured (bench:gateway on Redis, 500 req/s open loop), it put p99 at ~45 ms
    // against ~5 ms without it, for no throughput gain that outweighs that.
    ...options,
  };
}
