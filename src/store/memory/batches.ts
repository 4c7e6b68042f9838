import type { BatchClaim, BatchRecord, ItemKeyClaim } from '../../batches/types';
import type { BatchStore } from '../../batches/store';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

import { collectPage, indexMember, type Page, type PageRequest } from '../../listing';
import { MemoryAccountIndex } from './account-index';

const IN_FLIGHT = '\u0000in-flight';

/** Embedded mode: maps with expiry times, read against the injected clock. */
export class MemoryBatchStore implements BatchStore {
  private readonly batches = new Map<string, Expiring<BatchRecord>>();
  private readonly batchKeys = new Map<string, Expiring<string>>();
  private readonly itemKeys = new Map<string, Expiring<string>>();
  private readonly index = new MemoryAccountIndex();

  private static live<T>(map: Map<string, Expiring<T>>, key: string, now: number): T | undefined {
    const entry = map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      map.delete(key);
      return undefined;
    }
    return entry.value;
  }

  async claim(
    accountId: string,
    idempotencyKey: string,
    claimTtlMs: number,
    now: number,
  ): Promise<BatchClaim> {
    const key = `${accountId}\u0000${idempotencyKey}`;
    const current = MemoryBatchStore.live(this.batchKeys, key, now);
    if (current === IN_FLIGHT) return { status: 'in_flight' };
    if (current !== undefined) {
      const batch = MemoryBatchStore.live(this.batches, current, now);
      if (batch) return { status: 'exists', batch: structuredClone(batch) };
    }
    this.batchKeys.set(key, { value: IN_FLIGHT, expiresAt: now + claimTtlMs });
    return { status: 'claimed' };
  }

  async save(batch: BatchRecord): Promise<void> {
    this.batches.set(batch.batchId, { value: structuredClone(batch), expiresAt: batch.expiresAt });
    this.index.add(batch.accountId, indexMember(batch.createdAt, batch.batchId));
    this.batchKeys.set(`${batch.accountId}\u0000${batch.idempotencyKey}`, {
      value: batch.batchId,
      expiresAt: batch.expiresAt,
    });
  }

  async release(accountId: string, idempotencyKey: string): Promise<void> {
    const key = `${accountId}\u0000${idempotencyKey}`;
    if (this.batchKeys.get(key)?.value === IN_FLIGHT) this.batchKeys.delete(key);
  }

  async get(batchId: string, now: number): Promise<BatchRecord | null> {
    const batch = MemoryBatchStore.live(this.batches, batchId, now);
    return batch ? structuredClone(batch) : null;
  }

  async claimItemKey(
    accountId: string,
    key: string,
    taskId: string,
    expiresAt: number,
    now: number,
  ): Promise<ItemKeyClaim> {
    const id = `${accountId}\u0000${key}`;
    const existing = MemoryBatchStore.live(this.itemKeys, id, now);
    if (existing !== undefined) return { status: 'exists', taskId: existing };
    this.itemKeys.set(id, { value: taskId, expiresAt });
    return { status: 'claimed' };
  }

  async releaseItemKey(accountId: string, key: string, taskId: string): Promise<void> {
    const id = `${accountId}\u0000${key}`;
    if (this.itemKeys.get(id)?.value === taskId) this.itemKeys.delete(id);
  }

  async findItemKey(accountId: string, key: string, now: number): Promise<string | null> {
    return MemoryBatchStore.live(this.itemKeys, `${accountId}\u0000${key}`, now) ?? null;
  }

  async list(
    accountId: string,
    page: PageRequest,
    match: (batch: BatchRecord) => boolean,
    now: number,
  ): Promise<Page<BatchRecord>> {
    return collectPage(
      page,
      this.index.records(accountId, (id) => {
        const batch = MemoryBatchStore.live(this.batches, id, now);
        return batch ? structuredClone(batch) : null;
      }),
      match,
    );
  }
}
