export interface BatchItemRecord {
  ordinal: number;
  clientItemId: string;
  /** null when rejected. */
  taskId: string | null;
  outcome: 'accepted' | 'reused' | 'rejected';
  error?: { code: string; message: string };
}

export interface BatchRecord {
  batchId: string;
  accountId: string;
  model: string;
  idempotencyKey: string;
  /** SHA-256 of the canonical payload: a replay must carry the same items (and webhook_url). */
  payloadHash: string;
  createdAt: number;
  expiresAt: number;
  webhookUrl?: string;
  /** The webhook secret version the batch was accepted with. */
  secretVersion?: number;
  items: BatchItemRecord[];
}

export type BatchClaim =
  | { status: 'claimed' }
  /** Another request with this Idempotency-Key is still being processed. */
  | { status: 'in_flight' }
  | { status: 'exists'; batch: BatchRecord };

export type ItemKeyClaim = { status: 'claimed' } | { status: 'exists'; taskId: string };

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
}
