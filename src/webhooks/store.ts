import type { Page, PageRequest } from '../listing';

export interface SecretVersion {
  version: number;
  /** The secret, encrypted (never stored in clear). */
  ciphertext: string;
  createdAt: number;
  /** When a rotation superseded it; it still signs its batches for the grace period. */
  retiredAt?: number;
  revokedAt?: number;
}

export interface WebhookSecretStore {
  /** The current version, created with `ciphertext` when the account has none (first use, or after a revoke). */
  current(accountId: string, ciphertext: string, at: number): Promise<SecretVersion>;
  /** Retires the current version (if any) and makes a new one current. */
  rotate(accountId: string, ciphertext: string, at: number): Promise<SecretVersion>;
  /** Revokes every version; the next `current` creates a higher one. Returns the highest version so far. */
  revoke(accountId: string, at: number): Promise<number>;
  get(accountId: string, version: number): Promise<SecretVersion | null>;
  /** When the account last revoked its secrets, if ever. */
  revokedAt(accountId: string): Promise<number | null>;
}

/** One attempt to deliver a callback or batch webhook, as the delivery log keeps it. */
export interface DeliveryAttempt {
  /** `dlv_` id of this attempt (its account's tag first, like task ids). */
  deliveryId: string;
  eventId: string;
  accountId: string;
  kind: 'callback' | 'webhook';
  url: string;
  taskId?: string;
  batchId?: string;
  /** 1 for the first attempt of a sending (and of a redelivery), then 2, 3 ... */
  attempt: number;
  /** Set on the attempts of a redelivery a client asked for. */
  redelivery?: boolean;
  at: number;
  /** `delivered` (accepted), `failed` (a status the receiver should not answer, a timeout, a network error), or
   * `suppressed` (the secret it would sign with was revoked or retired). */
  status: 'delivered' | 'failed' | 'suppressed';
  httpStatus: number | null;
  latencyMs: number | null;
  error: string | null;
  /** What was sent, for a redelivery: the exact body and the secret version it signs with. */
  body: string;
  secretVersion?: number;
}

export interface DeliveryLogStore {
  /** Keeps `attempt` for `retentionMs`, indexed for its account's log. */
  record(attempt: DeliveryAttempt, retentionMs: number): Promise<void>;
  get(deliveryId: string): Promise<DeliveryAttempt | null>;
  /** The account's attempts newest first (by time, then id) below `page.cursor`, that `match`. */
  list(
    accountId: string,
    page: PageRequest,
    match: (attempt: DeliveryAttempt) => boolean,
    now: number,
  ): Promise<Page<DeliveryAttempt>>;
}
