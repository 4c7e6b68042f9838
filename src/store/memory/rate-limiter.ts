import type { RateLimit } from '../../config';
import type { RateLimitDecision } from '../../accounts/store';

interface Bucket {
  tokens: number;
  ts: number;
  /** When the bucket is full again; from then on it equals a fresh one and may be dropped. */
  fullAt: number;
}

/** The same token bucket as key_gate.lua, on this process's monotonic clock (the memory key gate's). */
export class MemoryRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private sweeps = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(bucketId: string, limit: RateLimit, cost = 1): RateLimitDecision {
    const now = this.now();
    const bucket = this.buckets.get(bucketId) ?? { tokens: limit.burst, ts: now, fullAt: now };
    if (now > bucket.ts) {
      bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.ts) * limit.ratePerSec) / 1000);
    }
    bucket.ts = now;
    let decision: RateLimitDecision;
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      decision = { allowed: true, retryAfterMs: 0, remaining: Math.floor(bucket.tokens) };
    } else {
      const retryAfterMs = Math.ceil(((cost - bucket.tokens) * 1000) / limit.ratePerSec);
      decision = { allowed: false, retryAfterMs, remaining: Math.floor(bucket.tokens) };
    }
    bucket.fullAt = now + ((limit.burst - bucket.tokens) * 1000) / limit.ratePerSec;
    this.buckets.set(bucketId, bucket);
    if (++this.sweeps % 10_000 === 0) this.sweep(now);
    return decision;
  }

  /** Drops buckets that have refilled; bounds memory to the keys in active use. */
  private sweep(now: number): void {
    for (const [id, bucket] of this.buckets) if (now >= bucket.fullAt) this.buckets.delete(id);
  }
}
