import type { Redis } from 'ioredis';
import type { RateLimit } from '../../src/config';
import type { KeyGateResult, KeyRecord } from '../../src/accounts/store';
import { redisKeys } from '../../src/store/keys';
import { createRedisConnection, createRedisStore, type RedisClient } from '../../src/store/redis';
import { KEY_GATE_TIMING, leaseSize, RedisKeyGate, type KeyGateTiming } from '../../src/store/redis/key-gate';
import { settled } from '../helpers/eventually';
import { freePort } from '../helpers/gateway';
import { describeRedis, dropPrefix, redisUrl, uniquePrefix } from '../helpers/redis';
import { OPTIONS } from '../contract/stores';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

type RedisStore = ReturnType<typeof createRedisStore>;

const allowed = (r: KeyGateResult) => typeof r !== 'string' && r.allowed;

/**
 * Two store objects on one Redis namespace are two replicas: what one writes the other reads, and each has its own
 * key gate (leases, key-event feed).
 */
describeRedis('the Redis key gate across replicas', () => {
  let prefix: string;
  let a: RedisStore;
  let b: RedisStore;
  /** Gates built by a test itself (own timing or feed connection), closed after it, and their proxies. */
  const extra: RedisKeyGate[] = [];
  const proxies: TcpProxy[] = [];

  beforeEach(async () => {
    prefix = uniquePrefix('keygate');
    a = createRedisStore(redisUrl!, prefix, OPTIONS);
    b = createRedisStore(redisUrl!, prefix, OPTIONS);
    await a.accounts.createAccount({
      accountId: 'acct_1',
      name: 'Acme',
      createdAt: 1,
      webhookScheme: 'genway',
    });
  });
  afterEach(async () => {
    await Promise.all(extra.splice(0).map((gate) => gate.close()));
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
    await a.close();
    await b.close();
    await dropPrefix(prefix);
  });

  /** A live key `key_<c>` (hash `c` x 64). */
  async function liveKey(c: string): Promise<KeyRecord> {
    const key: KeyRecord = {
      keyId: `key_${c}`,
      accountId: 'acct_1',
      name: c,
      hash: c.repeat(64),
      models: null,
      rateLimit: null,
      createdAt: 1,
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
      prefix: null,
      metadata: null,
      rotatedFrom: null,
    };
    await a.accounts.insertKey(key);
    return key;
  }

  /** Starts a gate's key-event feed (it starts on first use) and waits until it is current. */
  async function inSync(gate: RedisKeyGate): Promise<void> {
    await gate.pass('0'.repeat(64), 'key_none', { ratePerSec: 1, burst: 1 });
    expect(await settled(() => gate.inSync(), true, 2000)).toBe(true);
  }

  /** A gate on `a`'s command connection whose feed connects to `url`, with its own timing. */
  function ownGate(url: string, timing: Partial<KeyGateTiming> = {}): RedisKeyGate {
    const gate = new RedisKeyGate(
      a.redis,
      redisKeys(prefix),
      (options) => createRedisConnection(url, 'test-key-events', options),
      timing,
    );
    extra.push(gate);
    return gate;
  }

  /** A gate whose feed reaches Redis through a proxy the test can cut (an outage of that connection only). */
  async function gateBehindProxy(timing: Partial<KeyGateTiming> = {}) {
    const { hostname, port } = new URL(redisUrl!);
    const proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
    proxies.push(proxy);
    return { gate: ownGate(`redis://127.0.0.1:${proxy.port}`, timing), proxy };
  }

  /**
   * Counts key_gate.lua runs against one bucket (MONITOR on a connection of its own). ioredis marks a connection as
   * monitoring a tick after MONITOR's reply, so a MONITOR line that arrives with that reply (a busy server: other
   * suites' commands) is read as a reply to no command, "Command queue state error" (redis/ioredis#1981); so is one
   * that arrives as the connection closes. The connection has its error listener before it connects: an error before
   * it monitors starts another (a line then missed is from before any counted call); after it, count() fails with it,
   * so a count is never read off a broken monitor; after stop() it is ignored.
   */
  async function countGateRuns(bucketId: string): Promise<{ count(): number; stop(): void }> {
    const bucket = redisKeys(prefix).rateLimit(bucketId);
    for (let attempt = 1; ; attempt++) {
      const monitor = (a.redis as Redis).duplicate({ monitor: true, lazyConnect: true });
      let n = 0;
      let monitoring = false;
      let stopped = false;
      let failed: Error | undefined;
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (/^eval/i.test(args[0]) && args.includes(bucket)) n++;
      });
      const started = new Promise<boolean>((resolve) => {
        monitor.once('monitoring', () => resolve((monitoring = true)));
        monitor.on('error', (err: Error) => {
          if (!monitoring) resolve(false);
          else if (!stopped) failed ??= err;
        });
      });
      void monitor.connect().catch(() => undefined);
      if (!(await started)) {
        monitor.disconnect();
        if (attempt === 5) throw new Error('MONITOR did not start in 5 attempts');
        continue;
      }
      return {
        count: () => {
          if (failed) throw failed;
          return n;
        },
        stop: () => {
          stopped = true;
          monitor.disconnect();
        },
      };
    }
  }

  test('two replicas share one bucket: together they admit at most burst + rate x elapsed', async () => {
    await Promise.all([inSync(a.keyGate), inSync(b.keyGate)]);
    const key = await liveKey('s');
    const limit: RateLimit = { ratePerSec: 50, burst: 20 };
    expect(leaseSize(limit)).toBe(5); // leased ahead of need (>= 4), so the prefetch path runs too
    const admitted = { a: 0, b: 0 };
    const start = performance.now();
    while (performance.now() - start < 600) {
      const round = await Promise.all(
        [a, b, a, b, a, b].map((s) => s.keyGate.pass(key.hash, key.keyId, limit)),
      );
      round.forEach((r, i) => {
        if (allowed(r)) admitted[i % 2 ? 'b' : 'a']++;
      });
    }
    const elapsedS = (performance.now() - start) / 1000;
    const total = admitted.a + admitted.b;
    // The shared bucket's refill happens on Redis time between the first and last script, inside this interval.
    expect(total).toBeLessThanOrEqual(limit.burst + limit.ratePerSec * elapsedS);
    // Nothing is lost but what the two replicas may hold at the end (one lease each).
    expect(total).toBeGreaterThanOrEqual(limit.burst - 2 * leaseSize(limit));
    expect(admitted.a).toBeGreaterThan(0);
    expect(admitted.b).toBeGreaterThan(0);
  });

  test('while one replica idles, the other can spend all but that replica lease, and the idle one admits again', async () => {
    await Promise.all([inSync(a.keyGate), inSync(b.keyGate)]);
    const key = await liveKey('i');
    const limit: RateLimit = { ratePerSec: 40, burst: 40 };
    const lease = leaseSize(limit);
    expect(allowed(await a.keyGate.pass(key.hash, key.keyId, limit))).toBe(true); // a now holds lease - 1
    let fromB = 0;
    for (let i = 0; i < limit.burst; i++) {
      if (allowed(await b.keyGate.pass(key.hash, key.keyId, limit))) fromB++;
    }
    expect(fromB).toBeGreaterThanOrEqual(limit.burst - lease);
    // b drained the bucket and idles; a keeps admitting from its lease and the refill (40/s: within 1 s).
    expect(
      await settled(async () => allowed(await a.keyGate.pass(key.hash, key.keyId, limit)), true, 1000),
    ).toBe(true);
  });

  test('a small limit is leased a token or two at a time, so replicas never starve each other', async () => {
    await Promise.all([inSync(a.keyGate), inSync(b.keyGate)]);
    const key = await liveKey('m');
    const limit: RateLimit = { ratePerSec: 0.01, burst: 6 };
    expect(leaseSize(limit)).toBe(1);
    const outcomes: boolean[] = [];
    for (let i = 0; i < 8; i++)
      outcomes.push(allowed(await (i % 2 ? a : b).keyGate.pass(key.hash, key.keyId, limit)));
    expect(outcomes).toEqual([true, true, true, true, true, true, false, false]);
  });

  test('concurrent requests of one key on one replica share one lease request', async () => {
    await inSync(a.keyGate);
    const big = await liveKey('c');
    const small = await liveKey('d');
    const runs = await countGateRuns(big.keyId);
    const smallRuns = await countGateRuns(small.keyId);
    try {
      // L = 100: one lease serves 40 requests that arrive together.
      const bigLimit = { ratePerSec: 1000, burst: 1000 };
      const bigResults = await Promise.all(
        Array.from({ length: 40 }, () => a.keyGate.pass(big.hash, big.keyId, bigLimit)),
      );
      expect(bigResults.every(allowed)).toBe(true);
      // L = 1: the first request's lease, then one more for the nine that waited on it.
      const smallLimit = { ratePerSec: 5, burst: 10 };
      const smallResults = await Promise.all(
        Array.from({ length: 10 }, () => a.keyGate.pass(small.hash, small.keyId, smallLimit)),
      );
      expect(smallResults.every(allowed)).toBe(true);
      expect(await settled(() => runs.count(), 1, 1000)).toBe(1);
      expect(await settled(() => smallRuns.count(), 2, 1000)).toBe(2);
    } finally {
      runs.stop();
      smallRuns.stop();
    }
  });

  test('the shared bucket refusing a waiting request gives the time until its token', async () => {
    await inSync(a.keyGate);
    const key = await liveKey('r');
    const limit = { ratePerSec: 0.5, burst: 3 };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => a.keyGate.pass(key.hash, key.keyId, limit)),
    );
    expect(results.map(allowed)).toEqual([true, true, true, false, false]);
    for (const refused of results.slice(3)) {
      if (typeof refused === 'string') throw new Error(refused);
      expect(refused.retryAfterMs).toBeGreaterThan(1900);
      expect(refused.retryAfterMs).toBeLessThanOrEqual(2000);
    }
  });

  test('a key revoked through one replica is refused by the other once the event arrives (within trustMs), and at once by the first', async () => {
    // The other replica's leases would last a minute: only the key event can end its trust in this one.
    const other = ownGate(redisUrl!, { leaseMs: 60_000 });
    await Promise.all([inSync(a.keyGate), inSync(other)]);
    const key = await liveKey('v');
    const limit = { ratePerSec: 1_000_000, burst: 1_000_000 }; // L = 100,000: both replicas hold a lease
    expect(allowed(await a.keyGate.pass(key.hash, key.keyId, limit))).toBe(true);
    expect(allowed(await other.pass(key.hash, key.keyId, limit))).toBe(true);
    await a.accounts.revokeKey(key.keyId, 2);
    expect(await a.keyGate.pass(key.hash, key.keyId, limit)).toBe('revoked');
    expect(
      await settled(() => other.pass(key.hash, key.keyId, limit), 'revoked', KEY_GATE_TIMING.trustMs),
    ).toBe('revoked');
  });

  test('with its key-event feed unreachable a gate never trusts a lease: key_gate.lua per request, revocation at once', async () => {
    const gate = ownGate(`redis://127.0.0.1:${await freePort()}`);
    const key = await liveKey('u');
    const limit = { ratePerSec: 1_000_000, burst: 1_000_000 };
    const runs = await countGateRuns(key.keyId);
    try {
      for (let i = 0; i < 3; i++) expect(allowed(await gate.pass(key.hash, key.keyId, limit))).toBe(true);
      expect(gate.inSync()).toBe(false);
      expect(await settled(() => runs.count(), 3, 1000)).toBe(3);
      await b.accounts.revokeKey(key.keyId, 2);
      expect(await gate.pass(key.hash, key.keyId, limit)).toBe('revoked');
    } finally {
      runs.stop();
    }
  });

  test('a gate whose feed is cut off stops trusting its leases within trustMs, and trusts again once it has caught up', async () => {
    const { gate, proxy } = await gateBehindProxy();
    await inSync(gate);
    const key = await liveKey('t');
    const limit = { ratePerSec: 1_000_000, burst: 1_000_000 };
    expect(allowed(await gate.pass(key.hash, key.keyId, limit))).toBe(true);
    proxy.cut(); // the sync loop's reads now fail
    await b.accounts.revokeKey(key.keyId, 2); // its event cannot reach the gate
    expect(await settled(() => gate.inSync(), false, KEY_GATE_TIMING.trustMs + 500)).toBe(false);
    expect(await gate.pass(key.hash, key.keyId, limit)).toBe('revoked');

    const other = await liveKey('o');
    proxy.restore();
    expect(await settled(() => gate.inSync(), true, 2000)).toBe(true);
    expect(allowed(await gate.pass(other.hash, other.keyId, limit))).toBe(true);
  });

  test('a gap in the key-event stream (trimmed past the reader, or begun again) drops every lease', async () => {
    // Leases and a feed trusted for a minute: only the gap can make the gate ask Redis again.
    const { gate, proxy } = await gateBehindProxy({ leaseMs: 60_000, trustMs: 60_000 });
    await inSync(gate);
    const [k1, k2, x1, x2, x3] = await Promise.all(['p', 'q', 'x', 'y', 'z'].map(liveKey));
    const limit = { ratePerSec: 1_000_000, burst: 1_000_000 };
    for (const k of [k1, k2]) expect(allowed(await gate.pass(k.hash, k.keyId, limit))).toBe(true);
    const events = redisKeys(prefix).keyEvents;
    const revokeSilently = (k: KeyRecord) =>
      a.redis.hset(redisKeys(prefix).keyByHash(k.hash), 'revokedAt', 2);

    // Trimmed past: while the feed is cut off, k1 is revoked and its event trimmed away with the one after it.
    proxy.cut();
    await revokeSilently(k1);
    await b.accounts.revokeKey(x1.keyId, 2);
    await b.accounts.revokeKey(x2.keyId, 2);
    await a.redis.xtrim(events, 'MAXLEN', 1); // only x2's event is left: the reader finds a gap before it
    expect(allowed(await gate.pass(k1.hash, k1.keyId, limit))).toBe(true); // still trusted (trustMs 60 s)
    proxy.restore();
    expect(await settled(() => gate.pass(k1.hash, k1.keyId, limit), 'revoked', 2000)).toBe('revoked');

    // Begun again: the stream deleted and written anew (seq starts over at 1).
    expect(allowed(await gate.pass(k2.hash, k2.keyId, limit))).toBe(true);
    proxy.cut();
    await revokeSilently(k2);
    await a.redis.del(events);
    await b.accounts.revokeKey(x3.keyId, 3);
    proxy.restore();
    expect(await settled(() => gate.pass(k2.hash, k2.keyId, limit), 'revoked', 2000)).toBe('revoked');
  });

  test('close() ends a blocked read at once, also while the feed is cut off, and leaves nothing running', async () => {
    const connections: RedisClient[] = [];
    const track = (url: string) =>
      new RedisKeyGate(a.redis, redisKeys(prefix), (options) => {
        const connection = createRedisConnection(url, 'test-key-events', options);
        connections.push(connection);
        return connection;
      });
    const live = track(redisUrl!);
    await inSync(live);
    await live.close();
    const { hostname, port } = new URL(redisUrl!);
    const proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
    proxies.push(proxy);
    const cutOff = track(`redis://127.0.0.1:${proxy.port}`);
    await inSync(cutOff);
    proxy.cut();
    await settled(() => connections[1].status, 'end', 1000);
    await cutOff.close();
    await cutOff.close(); // twice is harmless
    expect(connections.map((c) => c.status)).toEqual(['end', 'end']);
    expect([live.inSync(), cutOff.inSync()]).toEqual([false, false]);
  });
});
