import { createHash } from 'node:crypto';
import { z } from 'zod';
import { assertModelAllowed, type AuthContext } from '../accounts/service';
import { submittedModel } from '../catalog';
import type { Catalog, PreparedTask, TaskModel } from '../catalog/types';
import type { Clock } from '../clock';
import { encodeCursor, parseListQuery } from '../listing';
import { itemResult } from '../tasks/views';
import { ApiError } from '../errors';
import { parseOrThrow } from '../http/validate';
import { newAccountId } from '../ids';
import type { BatchLink, TaskRecord } from '../tasks/types';
import type { BatchItemRecord, BatchRecord } from './types';
import type { BatchStore } from './store';

export const MAX_BATCH_ITEMS = 50;

/** What became of one item, for the request log: its task, and what it was charged. */
export interface ItemOutcome {
  taskId: string | null;
  outcome: 'accepted' | 'reused' | 'rejected';
  errorCode?: string;
  chargeMicros: number;
}
/** How long a claimed Idempotency-Key answers 409 if the request that claimed it never finishes. */
const CLAIM_TTL_MS = 60_000;

/** What batches need from the task API: the same validation, pricing and creation as single tasks. */
export interface BatchTaskPort {
  /** Throws ApiError('invalid_request') naming the field. */
  prepare(model: TaskModel, input: unknown): Promise<PreparedTask>;
  /** Charges and creates the task with this id; throws ApiError('insufficient_balance') when it does not fit. */
  create(
    auth: AuthContext,
    model: TaskModel,
    prepared: PreparedTask,
    taskId: string,
    batch: BatchLink,
  ): Promise<void>;
  get(taskId: string): Promise<TaskRecord | null>;
}

export interface BatchServiceDeps {
  store: BatchStore;
  catalog: Catalog;
  tasks: BatchTaskPort;
  /** The account's current webhook secret version (created on first use). */
  currentSecretVersion(accountId: string): Promise<number>;
  /** A reason when `url` is not an acceptable webhook target, else null. */
  webhookUrlProblem(url: string): string | null;
  clock: Clock;
  ttlMs: number;
}

const itemSchema = z.looseObject({
  client_item_id: z.string().min(1, 'must be a non-empty string').max(200),
  idempotency_key: z.string().min(1, 'must be a non-empty string').max(255),
  input: z.unknown(),
});

const bodySchema = z.looseObject({
  items: z
    .array(z.unknown(), 'is required and must be an array')
    .min(1, 'must hold 1 to 50 items')
    .max(MAX_BATCH_ITEMS, 'must hold 1 to 50 items'),
  webhook_url: z.string().optional(),
});

type BatchItemStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'rejected';
type BatchStatus = 'queued' | 'running' | 'completed' | 'completed_with_errors';

export interface BatchItemView {
  ordinal: number;
  clientItemId: string;
  taskId: string | null;
  accepted: boolean;
  status: BatchItemStatus;
  error?: { code: string; message: string };
  result?: Record<string, unknown>;
}

export interface BatchView {
  batchId: string;
  model: string;
  status: BatchStatus;
  replayed: boolean;
  newlyAcceptedCount: number;
  reusedCount: number;
  rejectedCount: number;
  items: BatchItemView[];
  batchExpiresAt: string;
}

const ITEM_STATUS: Record<TaskRecord['state'], BatchItemStatus> = {
  pending: 'queued',
  processing: 'running',
  success: 'succeeded',
  failed: 'failed',
};

/** JSON with object keys sorted at every depth: equal payloads hash equally whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** `callback_url` is ignored wherever it appears in a batch, inside an item's input too. */
function withoutCallbackUrl(input: unknown): unknown {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return input;
  const { callback_url: _ignored, ...rest } = input as Record<string, unknown>;
  return rest;
}

/** `YYYY-MM-DDTHH:MM:SS`, the spec's local date-time without zone, in UTC (the server's clock zone). */
export function formatExpiry(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19);
}

/** The batch's `Idempotency-Key` header: required, non-blank, at most 255 characters. Returns it, or throws a 400. */
export function checkIdempotencyKey(key: string | undefined): string {
  if (!key?.trim()) throw new ApiError('invalid_request', 'Idempotency-Key header is required');
  if (key.length > 255)
    throw new ApiError('invalid_request', 'Idempotency-Key must be at most 255 characters');
  return key;
}

export class BatchService {
  constructor(private readonly deps: BatchServiceDeps) {}

  /** `onItem` hears of each item processed (not of a replayed batch's): the request log's rows. */
  async submit(
    auth: AuthContext,
    modelId: string,
    idempotencyHeader: string | undefined,
    rawBody: unknown,
    onItem?: (item: ItemOutcome, batchId: string) => void,
  ) {
    const idempotencyKey = checkIdempotencyKey(idempotencyHeader);
    const model = submittedModel(this.deps.catalog, modelId);
    assertModelAllowed(auth, model.id);

    const body = parseOrThrow(bodySchema, rawBody, 'body');
    const items = body.items.map((item, i) => parseOrThrow(itemSchema, item, `items[${i}]`));
    this.assertUnique(
      items.map((i) => i.client_item_id),
      'client_item_id',
    );
    this.assertUnique(
      items.map((i) => i.idempotency_key),
      'idempotency_key',
    );
    if (body.webhook_url !== undefined) {
      const problem = this.deps.webhookUrlProblem(body.webhook_url);
      if (problem)
        throw new ApiError('invalid_request', `webhook_url must be a public HTTPS address: ${problem}`);
    }
    const inputs = items.map((i) => withoutCallbackUrl(i.input));
    const payloadHash = createHash('sha256')
      .update(
        canonical({
          model: model.id,
          webhook_url: body.webhook_url,
          items: items.map((i, n) => ({ c: i.client_item_id, k: i.idempotency_key, input: inputs[n] })),
        }),
      )
      .digest('hex');

    const now = this.deps.clock.now();
    const claim = await this.deps.store.claim(auth.accountId, idempotencyKey, CLAIM_TTL_MS, now);
    if (claim.status === 'in_flight') {
      throw new ApiError(
        'conflict',
        'A request with this Idempotency-Key is still being processed; retry later',
      );
    }
    if (claim.status === 'exists') {
      if (claim.batch.payloadHash !== payloadHash) {
        throw new ApiError(
          'unprocessable',
          'This Idempotency-Key was used with a different payload; use a new key',
        );
      }
      return this.view(claim.batch, true);
    }

    try {
      const batchId = newAccountId('batch', auth.accountId);
      const expiresAt = now + this.deps.ttlMs;
      const secretVersion = body.webhook_url
        ? await this.deps.currentSecretVersion(auth.accountId)
        : undefined;
      const link = (clientItemId: string): BatchLink => ({
        batchId,
        clientItemId,
        webhookUrl: body.webhook_url,
        secretVersion,
      });
      const records = await Promise.all(
        items.map((item, ordinal) =>
          this.submitItem(auth, model, ordinal, item.client_item_id, item.idempotency_key, inputs[ordinal], {
            link: link(item.client_item_id),
            expiresAt,
            now,
            onItem: onItem && ((outcome: ItemOutcome) => onItem(outcome, batchId)),
          }),
        ),
      );
      const batch: BatchRecord = {
        batchId,
        accountId: auth.accountId,
        model: model.id,
        idempotencyKey,
        payloadHash,
        createdAt: now,
        expiresAt,
        webhookUrl: body.webhook_url,
        secretVersion,
        items: records,
      };
      await this.deps.store.save(batch, now);
      return this.view(batch, false);
    } catch (err) {
      await this.deps.store.release(auth.accountId, idempotencyKey);
      throw err;
    }
  }

  /** Batch status: unknown, another account's, or another model's batch is the same 404. */
  async get(auth: AuthContext, modelId: string, batchId: string): Promise<BatchView> {
    const batch = await this.deps.store.get(batchId, this.deps.clock.now());
    if (!batch || batch.accountId !== auth.accountId || batch.model !== modelId) {
      throw new ApiError('not_found', `No batch ${batchId} for model ${modelId}`);
    }
    return this.view(batch, false);
  }

  private async submitItem(
    auth: AuthContext,
    model: TaskModel,
    ordinal: number,
    clientItemId: string,
    itemKey: string,
    input: unknown,
    at: { link: BatchLink; expiresAt: number; now: number; onItem?: (item: ItemOutcome) => void },
  ): Promise<BatchItemRecord> {
    const record = await this.processItem(auth, model, ordinal, clientItemId, itemKey, input, at);
    at.onItem?.({
      taskId: record.taskId,
      outcome: record.outcome,
      errorCode: record.error?.code,
      chargeMicros: record.chargeMicros ?? 0,
    });
    const { chargeMicros: _charged, ...kept } = record;
    return kept;
  }

  private async processItem(
    auth: AuthContext,
    model: TaskModel,
    ordinal: number,
    clientItemId: string,
    itemKey: string,
    input: unknown,
    at: { link: BatchLink; expiresAt: number; now: number },
  ): Promise<BatchItemRecord & { chargeMicros?: number }> {
    const base = { ordinal, clientItemId };
    const existing = await this.deps.store.findItemKey(auth.accountId, itemKey, at.now);
    if (existing) return { ...base, taskId: existing, outcome: 'reused' };

    let prepared: PreparedTask;
    try {
      prepared = await this.deps.tasks.prepare(model, input);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'invalid_request') {
        return {
          ...base,
          taskId: null,
          outcome: 'rejected',
          error: { code: 'invalid_parameter_value', message: err.message },
        };
      }
      throw err;
    }

    const taskId = newAccountId('task', auth.accountId);
    const claim = await this.deps.store.claimItemKey(auth.accountId, itemKey, taskId, at.expiresAt, at.now);
    if (claim.status === 'exists') return { ...base, taskId: claim.taskId, outcome: 'reused' };
    try {
      await this.deps.tasks.create(auth, model, prepared, taskId, at.link);
    } catch (err) {
      await this.deps.store.releaseItemKey(auth.accountId, itemKey, taskId);
      if (err instanceof ApiError && err.code === 'insufficient_balance') {
        return {
          ...base,
          taskId: null,
          outcome: 'rejected',
          error: { code: 'insufficient_balance', message: err.message },
        };
      }
      throw err;
    }
    return { ...base, taskId, outcome: 'accepted', chargeMicros: prepared.chargeMicros };
  }

  private async view(batch: BatchRecord, replayed: boolean): Promise<BatchView> {
    const tasks = await Promise.all(
      batch.items.map((i) => (i.taskId ? this.deps.tasks.get(i.taskId) : null)),
    );
    const items = batch.items.map((item, n): BatchItemView => {
      const base = { ordinal: item.ordinal, clientItemId: item.clientItemId, taskId: item.taskId };
      if (item.outcome === 'rejected')
        return { ...base, accepted: false, status: 'rejected', error: item.error };
      const task = tasks[n];
      const status = task ? ITEM_STATUS[task.state] : 'queued';
      const view: BatchItemView = { ...base, accepted: true, status };
      if (task && (task.state === 'success' || task.state === 'failed')) view.result = itemResult(task);
      return view;
    });
    const accepted = items.filter((i) => i.accepted);
    let status: BatchStatus;
    if (accepted.length === 0) status = 'completed_with_errors';
    else if (accepted.every((i) => i.status === 'succeeded' || i.status === 'failed')) status = 'completed';
    else if (accepted.some((i) => i.status !== 'queued')) status = 'running';
    else status = 'queued';
    return {
      batchId: batch.batchId,
      model: batch.model,
      status,
      replayed,
      newlyAcceptedCount: batch.items.filter((i) => i.outcome === 'accepted').length,
      reusedCount: batch.items.filter((i) => i.outcome === 'reused').length,
      rejectedCount: batch.items.filter((i) => i.outcome === 'rejected').length,
      items,
      batchExpiresAt: formatExpiry(batch.expiresAt),
    };
  }

  /** GET /batches?model=&createdAfter=&createdBefore=&limit=&cursor=: the account's live batches, newest first. */
  async list(auth: AuthContext, query: unknown): Promise<{ items: unknown[]; nextCursor: string | null }> {
    const { model, ...page } = parseListQuery(query, { model: z.string().optional() });
    const now = this.deps.clock.now();
    const found = await this.deps.store.list(
      auth.accountId,
      page,
      (b) => model === undefined || b.model === model,
      now,
    );
    const items = await Promise.all(
      found.items.map(async (batch) => {
        const { items, replayed: _replayed, ...summary } = await this.view(batch, false);
        const count = (status: string) => items.filter((i) => i.status === status).length;
        return {
          ...summary,
          createdAt: batch.createdAt,
          itemCount: items.length,
          queuedCount: count('queued'),
          runningCount: count('running'),
          succeededCount: count('succeeded'),
          failedCount: count('failed'),
          ...(batch.webhookUrl ? { webhookUrl: batch.webhookUrl } : {}),
        };
      }),
    );
    return { items, nextCursor: encodeCursor(found.next) };
  }

  private assertUnique(values: string[], field: string): void {
    const seen = new Map<string, number>();
    values.forEach((value, i) => {
      const first = seen.get(value);
      if (first !== undefined) {
        throw new ApiError(
          'invalid_request',
          `items[${i}].${field} duplicates items[${first}].${field} (${JSON.stringify(value)})`,
        );
      }
      seen.set(value, i);
    });
  }
}
