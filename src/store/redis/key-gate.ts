import type { RedisOptions } from 'ioredis';
import type { RedisClient } from './connection';
import type { RateLimit } from '../../config';
import type { RedisKeys } from '../keys';
import type { KeyGate, KeyGateResult, RateLimitDecision } from '../../accounts/store';
import { KeyEventFeed, type KeyEventFeedTiming, type KeyEventListener } from './key-events';
import { LuaScript } from './scripts';

const keyGate = new LuaScript('key_gate');

/** The RedisClient key gate's clocks, in one place (tests shorten or lengthen them). */
export interface KeyGateTiming extends KeyEventFeedTiming {
  /**
   * Local state (leases and what they say of the key) is used only while the key-event feed's last completed read
   * was sent less than this long ago; otherwise every request runs key_gate.lua. This is the revocation bound.
   */
  trustMs: number;
  /** A lease's tokens lapse this long after it was asked for (unspent ones go back with the key's next lease). */
  leaseMs: number;
}

export const KEY_GATE_TIMING: Readonly<KeyGateTiming> = Object.freeze({
  trustMs: 1000,
  leaseMs: 1000,
  blockMs: 250,
  readTimeoutMs: 1250,
  retryMs: 100,
});

/** key_gate.lua's negative answers. */
function gateRefusal(status: number): 'unknown' | 'revoked' | 'expired' {
  return status === -1 ? 'unknown' : status === -2 ? 'revoked' : 'expired';
}

/** A lease this small is not topped up ahead of need: replicas must not hoard a small limit's tokens. */
const PREFETCH_MIN = 4;
/** Above this many leases held, lapsed ones are swept (at most once per lease lifetime). */
const SWEEP_ABOVE = 10_000;

/** Tokens per lease: 0.1 s of the key's rate, at most a quarter of its burst, at least 1. */
export function leaseSize(limit: RateLimit): number {
  return Math.max(1, Math.min(Math.ceil(limit.ratePerSec * 0.1), Math.floor(limit.burst / 4)));
}

interface Waiter {
  cost: number;
  resolve(result: KeyGateResult | Promise<KeyGateResult>): void;
  reject(err: unknown): void;
}

/** What this replica holds of one key: tokens taken from its shared bucket, spent here without a round trip. */
class Lease {
  tokens = 0;
  expiresAt = -Infinity;
  /** Whole tokens the shared bucket held after this replica's last lease (for `remaining`). */
  shared = 0;
  inFlight = false;
  /** The key's expiry (wall-clock ms) as the last lease reported it: no token is spent past it. */
  keyExpiresAt = Infinity;
  /** Set when a key event (or a gap in the feed) dropped it: an answer that lands later is not used. */
  dropped = false;
  /** Requests waiting for the lease in flight, served in order. */
  readonly waiters: Waiter[] = [];
  readonly size: number;

  constructor(
    readonly hash: string,
    readonly bucketId: string,
    readonly limit: RateLimit,
  ) {
    this.size = leaseSize(limit);
  }

  allowed(): RateLimitDecision {
    return { allowed: true, retryAfterMs: 0, remaining: Math.floor(this.tokens) + this.shared };
  }
}

/**
 * The key gate on RedisClient without a round trip per request. A replica takes a lease of up to `leaseSize(limit)`
 * tokens from the key's shared bucket with key_gate.lua (which also checks that the key exists and is not revoked)
 * and spends it locally; it tops the lease up ahead of need, and concurrent requests of a key share one lease
 * request. What a lease says of the key holds until a key event for it arrives through the stream
 * (KeyEventFeed); while the feed is not current (trustMs), every request runs key_gate.lua as before, so RedisClient
 * being away fails requests rather than admitting them.
 *
 * Limits across replicas: tokens are only ever spent after the shared bucket gave them, so from a full bucket the
 * requests admitted by all replicas together never exceed burst + rate x elapsed; each replica holds at most one
 * lease (L tokens) per key, which is what other replicas may miss (and what a window may see beyond one bucket's
 * count) at any moment, and a lease lapses leaseMs after it was taken.
 */
export class RedisKeyGate implements KeyGate, KeyEventListener {
  private readonly leases = new Map<string, Lease>();
  private readonly feed: KeyEventFeed;
  private readonly timing: KeyGateTiming;
  private nextSweep = 0;

  /**
   * @param connectFeed opens the key-event feed's own connection with the options given (on first use; closed by
   *   close())
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    connectFeed: (options: RedisOptions) => RedisClient,
    timing: Partial<KeyGateTiming> = {},
  ) {
    this.timing = { ...KEY_GATE_TIMING, ...timing };
    this.feed = new KeyEventFeed(connectFeed, keys.keyEvents, this, this.timing);
  }

  pass(hash: string, bucketId: string, limit: RateLimit, cost = 1): KeyGateResult | Promise<KeyGateResult> {
    const now = performance.now();
    if (!this.inSync(now)) {
      this.feed.start();
      return this.perRequest(hash, bucketId, limit, cost);
    }
    const lease = this.leases.get(hash);
    if (lease !== undefined && lease.keyExpiresAt !== Infinity && Date.now() >= lease.keyExpiresAt) {
      // Past the key's expiry: key_gate.lua says so (and what a rotation may have changed meanwhile).
      this.drop(lease);
      return this.perRequest(hash, bucketId, limit, cost);
    }
    if (lease !== undefined && lease.tokens >= cost && now < lease.expiresAt) {
      lease.tokens -= cost;
      if (
        !lease.inFlight &&
        lease.size >= PREFETCH_MIN &&
        (lease.tokens * 2 < lease.size || lease.expiresAt - now < this.timing.leaseMs / 4)
      ) {
        this.renew(lease, now);
      }
      return lease.allowed();
    }
    return this.wait(lease ?? this.open(hash, bucketId, limit, now), cost, now);
  }

  /** Whether local state may be used: the key-event feed read the stream less than trustMs ago. */
  inSync(now = performance.now()): boolean {
    return now - this.feed.appliedAt < this.timing.trustMs;
  }

  keyChanged(hash: string): void {
    const lease = this.leases.get(hash);
    if (lease) this.drop(lease);
  }

  lostTrack(): void {
    for (const lease of this.leases.values()) lease.dropped = true;
    this.leases.clear();
  }

  /** Stops the key-event feed and closes its connection. */
  async close(): Promise<void> {
    await this.feed.stop();
  }

  /** key_gate.lua for this request alone (today's path, and the fallback while the feed is not current). */
  private async perRequest(
    hash: string,
    bucketId: string,
    limit: RateLimit,
    cost: number,
  ): Promise<KeyGateResult> {
    const reply = (await keyGate.run(
      this.redis,
      [this.keys.keyByHash(hash), this.keys.rateLimit(bucketId)],
      [limit.ratePerSec, limit.burst, cost],
    )) as number[];
    if (reply[0] < 0) {
      this.keyChanged(hash);
      return gateRefusal(reply[0]);
    }
    return { allowed: reply[0] === 1, retryAfterMs: reply[1], remaining: reply[2] };
  }

  private open(hash: string, bucketId: string, limit: RateLimit, now: number): Lease {
    if (this.leases.size >= SWEEP_ABOVE && now >= this.nextSweep) {
      this.nextSweep = now + this.timing.leaseMs;
      for (const [h, lease] of this.leases) {
        if (!lease.inFlight && now >= lease.expiresAt) this.leases.delete(h);
      }
    }
    const lease = new Lease(hash, bucketId, limit);
    this.leases.set(hash, lease);
    return lease;
  }

  private wait(lease: Lease, cost: number, now: number): Promise<KeyGateResult> {
    return new Promise((resolve, reject) => {
      lease.waiters.push({ cost, resolve, reject });
      if (!lease.inFlight) this.renew(lease, now);
    });
  }

  /**
   * Asks the shared bucket for tokens: enough for every waiter and at least a full lease, or (ahead of need, no
   * waiter) what tops the lease up to its size. Tokens of a lapsed lease go back in the same step.
   */
  private renew(lease: Lease, now: number): void {
    let returned = 0;
    if (now >= lease.expiresAt && lease.tokens > 0) {
      returned = lease.tokens;
      lease.tokens = 0;
    }
    let waiting = 0;
    for (const waiter of lease.waiters) waiting += waiter.cost;
    const need = lease.waiters.length > 0 ? Math.max(0, lease.waiters[0].cost - lease.tokens) : 0;
    const want = Math.max(need, Math.max(lease.size, waiting) - Math.floor(lease.tokens));
    lease.inFlight = true;
    keyGate
      .run(
        this.redis,
        [this.keys.keyByHash(lease.hash), this.keys.rateLimit(lease.bucketId)],
        [lease.limit.ratePerSec, lease.limit.burst, need, want, returned],
      )
      .then(
        (reply) => this.settle(lease, reply as [number, number, number, string, string], want, now),
        (err: unknown) => {
          lease.inFlight = false;
          for (const waiter of lease.waiters.splice(0)) waiter.reject(err);
        },
      );
  }

  private settle(
    lease: Lease,
    [status, retryAfterMs, remaining, granted, keyExpiresAt]: [number, number, number, string, string],
    want: number,
    sentAt: number,
  ): void {
    lease.inFlight = false;
    const waiters = lease.waiters;
    if (lease.dropped) {
      // The key changed while this was in flight, so the answer may predate the change: ask again.
      for (const w of waiters.splice(0))
        w.resolve(this.pass(lease.hash, lease.bucketId, lease.limit, w.cost));
      return;
    }
    if (status < 0) {
      this.drop(lease);
      const result = gateRefusal(status);
      for (const w of waiters.splice(0)) w.resolve(result);
      return;
    }
    lease.keyExpiresAt = keyExpiresAt ? Number(keyExpiresAt) : Infinity;
    const got = Number(granted);
    lease.tokens += got;
    lease.expiresAt = sentAt + this.timing.leaseMs;
    lease.shared = remaining;
    let served = 0;
    while (served < waiters.length && lease.tokens >= waiters[served].cost) {
      lease.tokens -= waiters[served].cost;
      waiters[served++].resolve(lease.allowed());
    }
    waiters.splice(0, served);
    if (waiters.length === 0) return;
    if (got < want) {
      // The shared bucket ran dry: what it would say to each of these requests.
      const refused = { allowed: false, retryAfterMs, remaining: Math.floor(lease.tokens) + remaining };
      for (const w of waiters.splice(0)) w.resolve({ ...refused });
    } else {
      // They came after this request left: one more for all of them.
      this.renew(lease, performance.now());
    }
  }

  private drop(lease: Lease): void {
    lease.dropped = true;
    if (this.leases.get(lease.hash) === lease) this.leases.delete(lease.hash);
  }
}
