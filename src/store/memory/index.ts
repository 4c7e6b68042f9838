import { MemoryBatchStore } from '../../batches/memory-store';
import { MemoryTaskStore } from '../../tasks/memory-store';
import { MemoryWebhookSecretStore } from '../../webhooks/secret-store';
import type { Store, StoreOptions } from '../types';
import { MemoryUsageStore } from '../usage';
import { MemoryVendorObjectStore } from '../vendor-objects';
import { MemoryAccountStore } from './accounts';
import { MemoryKeyGate } from './key-gate';
import { MemoryRateLimiter } from './rate-limiter';

export function createMemoryStore(options: StoreOptions): Store {
  const accounts = new MemoryAccountStore(options.ledgerRetentionMs);
  return {
    kind: 'memory',
    accounts,
    tasks: new MemoryTaskStore(accounts, options.taskRetentionMs),
    webhookSecrets: new MemoryWebhookSecretStore(),
    keyGate: new MemoryKeyGate(accounts, new MemoryRateLimiter()),
    batches: new MemoryBatchStore(),
    usage: new MemoryUsageStore(),
    vendorObjects: new MemoryVendorObjectStore(),
    ping: async () => undefined,
    close: async () => undefined,
  };
}
