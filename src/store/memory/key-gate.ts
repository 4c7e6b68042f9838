import type { RateLimit } from '../../config';
import type { KeyGate, KeyGateResult } from '../../accounts/store';
import type { MemoryAccountStore } from './accounts';
import type { MemoryRateLimiter } from './rate-limiter';

export class MemoryKeyGate implements KeyGate {
  constructor(
    private readonly accounts: MemoryAccountStore,
    private readonly limiter: MemoryRateLimiter,
  ) {}

  pass(hash: string, bucketId: string, limit: RateLimit, cost = 1): KeyGateResult {
    const status = this.accounts.keyStatus(hash, Date.now());
    return status === 'active' ? this.limiter.take(bucketId, limit, cost) : status;
  }
}
