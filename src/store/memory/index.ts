import { MemoryBatchStore } from './batches';
import { MemoryDeliveryLog } from './delivery-log';
import { MemoryTaskEvents } from './task-events';
import { MemoryTaskStore } from './tasks';
import { MemoryWebhookSecretStore } from './webhook-secrets';
import type { Store, StoreOptions } from '../types';
import { MemoryUsageStore } from './usage';
import { MemoryVendorObjectStore } from './vendor-objects';
import { MemoryVendorKeyHealth } from './vendor-key-health';
import { MemoryAccountStore } from './accounts';
import { MemoryKeyGate } from './key-gate';
import { MemoryRateLimiter } from './rate-limiter';
import { MemoryRecentStats } from './recent-stats';

export function createMemoryStore(options: StoreOptions): Store {
  const accounts = new MemoryAccountStore(options.ledgerRetentionMs);
  return {
    kind: 'memory',
    accounts,
    tasks: new MemoryTaskStore(accounts, options.taskRetentionMs),
    taskEvents: new MemoryTaskEvents(),
    webhookSecrets: new MemoryWebhookSecretStore(),
    deliveryLog: new MemoryDeliveryLog(),
    keyGate: new MemoryKeyGate(accounts, new MemoryRateLimiter()),
    batches: new MemoryBatchStore(),
    usage: new MemoryUsageStore(),
    vendorObjects: new MemoryVendorObjectStore(),
    vendorKeyHealth: new MemoryVendorKeyHealth(),
    recentStats: new MemoryRecentStats(),
    ping: async () => undefined,
    close: async () => undefined,
  };
}
