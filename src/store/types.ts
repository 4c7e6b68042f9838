import type { AccountStore, KeyGate } from '../accounts/store';
import type { BatchStore } from '../batches/store';
import type { VendorKeyHealth } from '../gateway/key-health';
import type { VendorObjectStore } from '../gateway/objects';
import type { UsageStore } from '../gateway/store';
import type { RecentStatsStore } from '../observability/recent-stats';
import type { TaskEvents } from '../tasks/events';
import type { TaskStore } from '../tasks/store';
import type { DeliveryLogStore, WebhookSecretStore } from '../webhooks/store';

/** What the adapters are told beyond where they live. */
export interface StoreOptions {
  /** How long a finished task (success or failed) is kept after its completion; status is then a 404. */
  taskRetentionMs: number;
  /** How long a ledger entry is kept (its reference with it); older ones go as new ones are posted. */
  ledgerRetentionMs: number;
  /** How long a day row of the usage rollups is kept (Redis: expiry of the day's hashes). */
  usageDayRetentionMs?: number;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  readonly accounts: AccountStore;
  readonly keyGate: KeyGate;
  readonly batches: BatchStore;
  readonly tasks: TaskStore;
  readonly taskEvents: TaskEvents;
  readonly webhookSecrets: WebhookSecretStore;
  readonly deliveryLog: DeliveryLogStore;
  readonly usage: UsageStore;
  readonly vendorObjects: VendorObjectStore;
  readonly vendorKeyHealth: VendorKeyHealth;
  /** Per-minute request stats of every replica (the console's last hour). */
  readonly recentStats: RecentStatsStore;
  /** Resolves when the backing store answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
