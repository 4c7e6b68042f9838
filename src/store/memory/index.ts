import { MemoryBatchStore } from '../../batches/memory-store';
import type { Store } from '../types';
import { MemoryAccountStore } from './accounts';
import { MemoryRateLimiter } from './rate-limiter';

export function createMemoryStore(): Store {
  return {
    kind: 'memory',
    accounts: new MemoryAccountStore(),
    rateLimiter: new MemoryRateLimiter(),
    batches: new MemoryBatchStore(),
    ping: async () => undefined,
    close: async () => undefined,
  };
}
