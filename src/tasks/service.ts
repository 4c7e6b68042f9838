import { z } from 'zod';
import { assertModelAllowed, budgetError, type AuthContext } from '../accounts/service';
import type { AccountsService } from '../accounts/service';
import { submittedModel } from '../catalog';
import type { Catalog, PreparedTask, TaskModel } from '../catalog/types';
import type { Clock } from '../clock';
import { ApiError } from '../errors';
import { microsToUsd, usdToMicros } from '../money';
import { parseOrThrow } from '../http/validate';
import { newAccountId } from '../ids';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import type { MediaProbe } from '../outbound/types';
import { orderRoutes, type JobOutcome, type Providers } from '../providers';
import { encodeCursor, parseListQuery } from '../listing';
import type { TaskEvents } from './events';
import { isActive, type BatchLink, type TaskRecord, type TerminalListener } from './types';
import { statusRecord, taskView } from './views';
import type { TaskStore } from './store';
import { scheduleStep } from './worker';

/** The failure a cancelled task ends in (the same on every model: decisions.md). */
export const CANCELLED = { failCode: 'CANCELLED', failMsg: 'Cancelled by the client' } as const;

/** The longest `Prefer: wait=N` honoured, in seconds. */
export const MAX_WAIT_SECONDS = 60;

const listFilters = {
  model: z.string().optional(),
  state: z
    .enum(['pending', 'processing', 'success', 'failed'], {
      error: 'must be one of pending, processing, success, failed',
    })
    .optional(),
  batchId: z.string().optional(),
};

const submitBody = z.strictObject({
  provider: z
    .enum(['auto', 'value', 'official'], { error: 'must be one of auto, value, official' })
    .default('auto'),
  request_type: z.enum(['async', 'callback'], { error: 'must be one of async, callback' }).default('async'),
  callback_url: z.string({ error: 'must be a string' }).optional(),
  input: z.unknown().optional(),
});

export interface TaskServiceDeps {
  store: TaskStore;
  /** Terminal-state events: published on every terminal write, waited on by `Prefer: wait`. */
  events: TaskEvents;
  accounts: AccountsService;
  catalog: Catalog;
  scheduler: Scheduler;
  clock: Clock;
  /** Where tasks run, by a route's `provider`. */
  providers: Providers;
  probe: MediaProbe;
  logger: Logger;
  /** A reason when `url` is not an acceptable callback target, else null. */
  callbackUrlProblem(url: string): string | null;
}

export interface CreateOptions {
  taskId?: string;
  requestType?: 'async' | 'callback';
  callbackUrl?: string;
  provider?: 'auto' | 'value' | 'official';
  batch?: BatchLink;
}

export class TaskService {
  private readonly listeners: TerminalListener[] = [];

  constructor(private readonly deps: TaskServiceDeps) {}

  /** Called after a task is terminal, inside the durable job (a throwing listener makes the job retry). */
  onTerminal(listener: TerminalListener): void {
    this.listeners.push(listener);
  }

  /** A model by the id in the path; an unknown one is a 400 naming it. */
  model(modelId: string): TaskModel {
    return submittedModel(this.deps.catalog, modelId);
  }

  prepare(model: TaskModel, input: unknown): Promise<PreparedTask> {
    return model.prepare(input, { probe: this.deps.probe });
  }

  /** POST /generateTask/{model}: validate everything, then charge and create in one step, then schedule. */
  async submit(auth: AuthContext, modelId: string, body: unknown): Promise<TaskRecord> {
    const model = this.model(modelId);
    assertModelAllowed(auth, model.id);
    const parsed = parseOrThrow(submitBody, body, 'body');
    if (parsed.request_type === 'callback') {
      if (!parsed.callback_url)
        throw new ApiError('invalid_request', 'callback_url is required when request_type is callback');
    }
    if (parsed.callback_url !== undefined) {
      const problem = this.deps.callbackUrlProblem(parsed.callback_url);
      if (problem)
        throw new ApiError('invalid_request', `callback_url must be a public HTTPS URL: ${problem}`);
    }
    const prepared = await this.prepare(model, parsed.input);
    const task = await this.create(auth, model, prepared, {
      requestType: parsed.request_type,
      callbackUrl: parsed.request_type === 'callback' ? parsed.callback_url : undefined,
      provider: parsed.provider,
    });
    return task;
  }

  /**
   * Charges and creates a task from a prepared input (single submissions and batch items). The progress job is
   * enqueued before the task is written, so a crash in between leaves at worst a job that finds no task, never an
   * acknowledged task without a job.
   */
  async create(
    auth: AuthContext,
    model: TaskModel,
    prepared: PreparedTask,
    options: CreateOptions = {},
  ): Promise<TaskRecord> {
    const balance = await this.deps.accounts.balanceUsd(auth.accountId);
    if (usdToMicros(balance) < prepared.chargeMicros) throw this.insufficient(prepared, balance);
    const task: TaskRecord = {
      taskId: options.taskId ?? newAccountId('task', auth.accountId),
      accountId: auth.accountId,
      keyId: auth.keyId,
      model: model.id,
      state: 'pending',
      requestType: options.requestType ?? 'async',
      callbackUrl: options.callbackUrl,
      provider: options.provider ?? 'auto',
      prepared,
      createTime: this.deps.clock.now(),
      batch: options.batch,
    };
    // A task whose first route's provider starts without I/O (the sandbox) starts at once: written `processing` on
    // that route, with one delayed check to finish it (no start job, no second write). Others start in the worker.
    const [first] = orderRoutes(model.routes, task.provider);
    const provider = first && this.deps.providers[first.provider];
    if (provider?.startsInline) {
      const job = await provider.start(task, model, first);
      task.state = 'processing';
      task.route = { id: first.id, ...(job.upstreamTaskId ? { upstreamTaskId: job.upstreamTaskId } : {}) };
      await scheduleStep(this.deps.scheduler, task.taskId, 'check', job.firstCheckMs);
    } else {
      await scheduleStep(this.deps.scheduler, task.taskId, 'start', 0);
    }
    const created = await this.deps.store.createWithCharge(task);
    switch (created.status) {
      case 'created':
        this.deps.accounts.budgetEvents(created.budgetEvents);
        return task;
      case 'insufficient_balance':
        throw this.insufficient(prepared, await this.deps.accounts.balanceUsd(auth.accountId));
      case 'over_budget':
        throw budgetError(created.budget);
      case 'unknown_account':
        throw new ApiError('unauthorized', 'Invalid API key');
    }
  }

  /**
   * GET /statusTask/{model}?taskId=: another account's task, or one of another model, is the same 404. With
   * `waitMs`, answers once the task is terminal or that time has passed.
   */
  async status(
    auth: AuthContext,
    modelId: string,
    taskId: unknown,
    waitMs = 0,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (typeof taskId !== 'string' || taskId === '')
      throw new ApiError('invalid_request', 'query.taskId is required');
    const task = await this.deps.store.get(taskId);
    if (!task || task.accountId !== auth.accountId || task.model !== modelId) {
      throw new ApiError('not_found', `No task ${taskId} for model ${modelId}`);
    }
    return statusRecord(await this.settled(task, waitMs, signal));
  }

  /** The caller's own task, whatever its model; another account's is a 404 like a missing one. */
  async find(auth: AuthContext, taskId: string): Promise<TaskRecord> {
    const task = await this.deps.store.get(taskId);
    if (!task || task.accountId !== auth.accountId) throw new ApiError('not_found', `No task ${taskId}`);
    return task;
  }

  /** GET /tasks/{taskId}: the list's view plus the input as it runs and what was (or is being) refunded. */
  async detail(auth: AuthContext, taskId: string): Promise<Record<string, unknown>> {
    const task = await this.find(auth, taskId);
    const model = this.deps.catalog.get(task.model);
    return {
      ...taskView(task),
      input: task.prepared.input,
      refundUsd: microsToUsd(model ? refundOf(task, model) : 0),
    };
  }

  /** GET /tasks?model=&state=&batchId=&createdAfter=&createdBefore=&limit=&cursor=: the account's, newest first. */
  async list(auth: AuthContext, query: unknown): Promise<{ items: unknown[]; nextCursor: string | null }> {
    const { model, state, batchId, ...page } = parseListQuery(query, listFilters);
    const found = await this.deps.store.list(
      auth.accountId,
      page,
      (t) =>
        (model === undefined || t.model === model) &&
        (state === undefined || t.state === state) &&
        (batchId === undefined || t.batch?.batchId === batchId),
    );
    return { items: found.items.map(taskView), nextCursor: encodeCursor(found.next) };
  }

  /**
   * The task once it is terminal, or as it stands after `waitMs`: woken by the task's terminal event (from any
   * replica), not by polling. Gives up early when `signal` aborts (the client went away).
   */
  async settled(task: TaskRecord, waitMs: number, signal?: AbortSignal): Promise<TaskRecord> {
    if (!isActive(task.state) || waitMs <= 0 || signal?.aborted) return task;
    const { events, store } = this.deps;
    return new Promise<TaskRecord>((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', finish);
        store.get(task.taskId).then(
          (now) => resolve(now ?? task),
          () => resolve(task),
        );
      };
      const unsubscribe = events.subscribe(task.taskId, finish);
      const timer = setTimeout(finish, waitMs);
      signal?.addEventListener('abort', finish);
      // It may have finished between the read that found it active and the subscription.
      store.get(task.taskId).then(
        (now) => now && !isActive(now.state) && finish(),
        () => undefined,
      );
    });
  }

  /**
   * POST /tasks/{taskId}/cancel: an active task ends `failed` (CANCELLED), its charge is refunded and its callback or
   * batch webhook sent as for any terminal state; a terminal task is left as it is. Racing its completion, exactly
   * one of the two writes the terminal state (compare-and-set), and the refund is posted once by its reference.
   */
  async cancel(
    auth: AuthContext,
    taskId: string,
  ): Promise<{ cancelled: boolean; task: Record<string, unknown> }> {
    const task = await this.find(auth, taskId);
    if (!isActive(task.state)) return { cancelled: false, task: taskView(task) };
    const model = this.deps.catalog.get(task.model);
    if (!model) throw new Error(`task ${task.taskId} has unknown model ${task.model}`);
    // The refund and notifications are a durable job, enqueued before the write: a crash after the write still
    // settles. It retries until it sees the task terminal.
    await scheduleStep(this.deps.scheduler, taskId, 'settle', 0);
    const completeTime = this.deps.clock.now();
    const cancelled: TaskRecord = {
      ...task,
      state: 'failed',
      ...CANCELLED,
      cancelledAt: completeTime,
      completeTime,
      costTime: completeTime - task.createTime,
    };
    if (!(await this.deps.store.replace(cancelled, ['pending', 'processing']))) {
      const now = await this.find(auth, taskId);
      return { cancelled: false, task: taskView(now) };
    }
    await this.published(taskId);
    // Refunded before the answer, so the caller's next balance read shows it (the job's refund is then a duplicate).
    await this.settle(cancelled, model);
    const route = model.routes.find((r) => r.id === task.route?.id);
    if (route) {
      await this.deps.providers[route.provider]
        .cancel(task, route)
        .catch((err: Error) =>
          this.deps.logger.warn(
            { taskId, route: route.id, reason: err.message },
            'upstream cancel failed; its outcome will be ignored',
          ),
        );
    }
    return { cancelled: true, task: taskView(cancelled) };
  }

  private async published(taskId: string): Promise<void> {
    await this.deps.events
      .publish(taskId)
      .catch((err: Error) => this.deps.logger.warn({ taskId, err }, 'task event not published'));
  }

  get(taskId: string): Promise<TaskRecord | null> {
    return this.deps.store.get(taskId);
  }

  /**
   * The one way a running task ends (the worker calls it with its provider's outcome): writes the terminal state
   * once (compare-and-set), then settles money and tells the listeners.
   */
  async complete(task: TaskRecord, model: TaskModel, outcome: JobOutcome): Promise<void> {
    const completeTime = this.deps.clock.now();
    const base = { ...task, completeTime, costTime: completeTime - task.createTime };
    let terminal: TaskRecord;
    if (outcome.state === 'failed') {
      terminal = { ...base, state: 'failed', failCode: outcome.failCode, failMsg: outcome.failMsg };
    } else {
      terminal = { ...base, state: 'success', resultUrls: outcome.resultUrls };
      if (task.prepared.settlement && model.settle && outcome.outputSeconds !== undefined) {
        terminal.billing = model.settle(task.prepared.settlement, outcome.outputSeconds).billing;
      }
    }
    if (await this.deps.store.replace(terminal, ['pending', 'processing'])) await this.published(task.taskId);
    else {
      terminal = (await this.deps.store.get(task.taskId)) ?? terminal;
      // Cancelled meanwhile: the cancel's own job settles and notifies.
      if (terminal.cancelledAt !== undefined) return;
    }
    await this.afterTerminal(terminal, model);
  }

  /** Money and notifications of a terminal task; idempotent, so a retried job may run it again. */
  async afterTerminal(task: TaskRecord, model: TaskModel): Promise<void> {
    await this.settle(task, model);
    for (const listener of this.listeners) await listener(task);
  }

  /** Refunds a failed task in full and a smart-duration task's unused pre-charge; idempotent per task. */
  private async settle(task: TaskRecord, model: TaskModel): Promise<void> {
    const refund = refundOf(task, model);
    if (refund > 0)
      await this.deps.accounts.refund(task.accountId, refund, `task:${task.taskId}`, {
        keyId: task.keyId,
        model: task.model,
        source: 'tasks',
      });
  }

  private insufficient(prepared: PreparedTask, balanceUsd: number): ApiError {
    return new ApiError(
      'insufficient_balance',
      `Insufficient balance: this task costs ${microsToUsd(prepared.chargeMicros)} USD and the account holds ${balanceUsd} USD`,
    );
  }
}

/** What a terminal task gives back (micro-USD): all of a failed one, a smart-duration task's unused pre-charge. */
function refundOf(task: TaskRecord, model: TaskModel): number {
  const charged = task.prepared.chargeMicros;
  if (task.state === 'failed') return charged;
  if (task.state === 'success' && task.billing && task.prepared.settlement && model.settle)
    return Math.max(
      0,
      charged - model.settle(task.prepared.settlement, task.billing.outputVideoSeconds).finalMicros,
    );
  return 0;
}
