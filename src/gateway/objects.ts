/** Who made a vendor object through Genway, and with which of the vendor's keys. */
export interface ObjectOwner {
  accountId: string;
  /** The fingerprint of the vendor key it was created with (`Upstream.fingerprint`), never the key. */
  keyFingerprint: string;
  /** When reading this object's content is metered (a batch's results): the usage format, billed once. */
  usage?: string;
  /** That reading is billed at a call's price (a background response), not a batch's... */
  call?: boolean;
  /** ...for the model the call named. */
  model?: string;
  /** When the record was last written (epoch ms): a record in use is written again before it expires. */
  at?: number;
}

/**
 * Vendor objects (responses, files, batches, uploads, cached contents) as Genway saw them created, so later calls
 * about one use the vendor key that created it and only its own account reaches it. Records expire after the
 * gateway's `objectTtlMs`.
 */
export interface VendorObjectStore {
  remember(vendor: string, objects: { id: string; owner: ObjectOwner }[], ttlMs: number): Promise<void>;
  /** One entry per id, null for an id Genway never saw (or whose record expired). */
  recall(vendor: string, ids: readonly string[]): Promise<(ObjectOwner | null)[]>;
}
