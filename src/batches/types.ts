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
