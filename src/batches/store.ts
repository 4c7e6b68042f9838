import type { Page, PageRequest } from '../listing';
import type { BatchClaim, BatchRecord, ItemKeyClaim } from './types';

export interface BatchStore {
  /**
   * Claims (account, Idempotency-Key) for a new batch. The claim lapses after `claimTtlMs`, so a request that
   * died half-way blocks retries (409) only for that long; item keys then make the retry reuse its tasks.
   */
  claim(accountId: string, idempotencyKey: string, claimTtlMs: number, now: number): Promise<BatchClaim>;
  /** Writes the batch and points its Idempotency-Key at it; both live until `batch.expiresAt`. */
  save(batch: BatchRecord, now: number): Promise<void>;
  /** Drops a claim that produced no batch (the request failed as a whole after claiming). */
  release(accountId: string, idempotencyKey: string): Promise<void>;
  get(batchId: string, now: number): Promise<BatchRecord | null>;
  /** Account-level item idempotency: binds `key` to `taskId` unless it is bound already. */
  claimItemKey(
    accountId: string,
    key: string,
    taskId: string,
    expiresAt: number,
    now: number,
  ): Promise<ItemKeyClaim>;
  /** Unbinds `key` if it is still bound to `taskId` (the task could not be created). */
  releaseItemKey(accountId: string, key: string, taskId: string): Promise<void>;
  findItemKey(accountId: string, key: string, now: number): Promise<string | null>;
  /** The account's live batches newest first (by createdAt, then id) below `page.cursor`, that `match`. */
  list(
    accountId: string,
    page: PageRequest,
    match: (batch: BatchRecord) => boolean,
    now: number,
  ): Promise<Page<BatchRecord>>;
}
