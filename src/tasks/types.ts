import type { BillingSnapshot, PreparedTask } from '../catalog/types';

/** What a batch item's task needs to send its own webhook without reading the batch. */
export interface BatchLink {
  batchId: string;
  clientItemId: string;
  webhookUrl?: string;
  /** The webhook secret version the batch was accepted with. */
  secretVersion?: number;
}

export type TaskState = 'pending' | 'processing' | 'success' | 'failed';

/** Not yet terminal. */
export const isActive = (state: TaskState) => state === 'pending' || state === 'processing';

export interface TaskRecord {
  taskId: string;
  accountId: string;
  keyId: string;
  model: string;
  state: TaskState;
  requestType: 'async' | 'callback';
  callbackUrl?: string;
  provider: 'auto' | 'value' | 'official';
  prepared: PreparedTask;
  createTime: number;
  completeTime?: number;
  costTime?: number;
  resultUrls?: string[];
  failCode?: string;
  failMsg?: string;
  billing?: BillingSnapshot;
  /** Set when the task is an item of a batch (its webhook is the batch's business). */
  batch?: BatchLink;
  /** Set when the client cancelled it (the task is then `failed` with failCode CANCELLED). */
  cancelledAt?: number;
  /** The route that runs the task, and the upstream's task id when it is a relay. */
  route?: { id: string; upstreamTaskId?: string; polls?: number };
}

/**
 * Called by the worker once a task is terminal, inside the durable job (a listener that throws makes the job
 * retry, so listeners must be idempotent). Batches use it to enqueue their per-item webhook.
 */
export type TerminalListener = (task: TaskRecord) => Promise<void>;
