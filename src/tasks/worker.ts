import type { Catalog, TaskModel } from '../catalog/types';
import type { Scheduler } from '../jobs';
import type { Logger } from '../observability/logger';
import { orderRoutes, ProviderError, upstreamFailCode, type Providers } from '../providers';
import type { TaskService } from './service';
import type { TaskStore } from './store';
import { isActive, type TaskRecord } from './types';

export const PROGRESS_QUEUE = 'task-progress';

/**
 * One step of a task's life, as a durable job: `start` picks a route and starts the job there, `check` asks the
 * provider where it stands (again and again until it is terminal), `settle` is a cancelled task's refund and
 * notifications, enqueued before the cancel is written. `finish` and `poll` are the names an earlier version gave
 * `check` (jobs it left in a queue still run).
 */
interface ProgressJob {
  taskId: string;
  step: 'start' | 'check' | 'settle' | 'finish' | 'poll';
}

/** A relayed task is given up after this many checks without a terminal state. */
const MAX_CHECKS = 2000;

/** Enqueues a step; the job id (task, step, n) makes a repeated enqueue of the same step a no-op. */
export function scheduleStep(
  scheduler: Scheduler,
  taskId: string,
  step: 'start' | 'check' | 'settle',
  delayMs: number,
  n = 0,
): Promise<void> {
  return scheduler.enqueue<ProgressJob>(
    PROGRESS_QUEUE,
    { taskId, step },
    { jobId: `${taskId}:${step}:${n}`, ...(delayMs > 0 ? { delayMs } : {}) },
  );
}

export interface TaskWorkerDeps {
  store: TaskStore;
  catalog: Catalog;
  scheduler: Scheduler;
  providers: Providers;
  logger: Logger;
  /** Ends tasks (states, money, notifications): the worker only drives providers. */
  tasks: Pick<TaskService, 'complete' | 'afterTerminal'>;
}

/** The job loop of tasks: starts each on a route (failing over), checks it until terminal, hands the outcome over. */
export class TaskWorker {
  constructor(private readonly deps: TaskWorkerDeps) {}

  /** Makes this process a worker of task progress. */
  register(): void {
    this.deps.scheduler.work<ProgressJob>(PROGRESS_QUEUE, (job, context) =>
      this.progress(job, context.attemptsMade),
    );
  }

  private async progress(job: ProgressJob, attemptsMade: number): Promise<void> {
    const task = await this.deps.store.get(job.taskId);
    if (!task) {
      // The job is enqueued just before its task is written: wait a little for it, then drop a job whose
      // submission was refused.
      if (attemptsMade < 2) throw new Error(`task ${job.taskId} not written yet`);
      return;
    }
    const model = this.deps.catalog.get(task.model);
    if (!model) throw new Error(`task ${task.taskId} has unknown model ${task.model}`);
    const active = isActive(task.state);

    if (job.step === 'settle') {
      // A cancel's job: runs once the cancel has written the terminal state (a lost race leaves it terminal too).
      if (active) {
        if (attemptsMade < 2) throw new Error(`task ${job.taskId} not cancelled yet`);
        return;
      }
      return this.deps.tasks.afterTerminal(task, model);
    }
    // A cancelled task's side effects are its settle job's; the steps still scheduled for it end here.
    if (!active && task.cancelledAt !== undefined) return;
    if (!active) return this.deps.tasks.afterTerminal(task, model); // a retried job: finish the side effects only
    if (job.step === 'start') return this.start(task, model);
    return this.check(task, model);
  }

  private routeOf(task: TaskRecord, model: TaskModel) {
    return model.routes.find((r) => r.id === task.route?.id);
  }

  /** Picks the route (failing over on 5xx, 429, timeouts and network errors) and starts the task there. */
  private async start(task: TaskRecord, model: TaskModel): Promise<void> {
    if (task.route) {
      // An earlier run of this job started it and died before scheduling the check: schedule it now.
      return scheduleStep(this.deps.scheduler, task.taskId, 'check', 0, task.route.polls ?? 0);
    }
    const failures: string[] = [];
    for (const route of orderRoutes(model.routes, task.provider)) {
      try {
        const job = await this.deps.providers[route.provider].start(task, model, route);
        const upstream = job.upstreamTaskId ? { upstreamTaskId: job.upstreamTaskId } : {};
        await this.deps.store.replace(
          { ...task, state: 'processing', route: { id: route.id, ...upstream, polls: 0 } },
          ['pending'],
        );
        await scheduleStep(this.deps.scheduler, task.taskId, 'check', job.firstCheckMs);
        return;
      } catch (err) {
        if (!(err instanceof ProviderError)) throw err;
        failures.push(err.message);
        if (!err.retryable) break;
        this.deps.logger.warn(
          { taskId: task.taskId, route: route.id, reason: err.message },
          'route failed; trying the next',
        );
      }
    }
    await this.deps.tasks.complete(task, model, {
      state: 'failed',
      failCode: upstreamFailCode(model),
      failMsg: failures.join('; ') || 'No route could run the task',
    });
  }

  /** Asks the task's provider where its job stands; ends the task on an outcome, else checks again later. */
  private async check(task: TaskRecord, model: TaskModel): Promise<void> {
    const route = this.routeOf(task, model);
    if (!route) throw new Error(`task ${task.taskId} has no route to check`);
    const provider = this.deps.providers[route.provider];
    const checks = (task.route?.polls ?? 0) + 1;
    let progress;
    try {
      progress = await provider.check(task, model, route);
    } catch (err) {
      if (!(err instanceof ProviderError) || !err.retryable || checks >= MAX_CHECKS) {
        return this.deps.tasks.complete(task, model, {
          state: 'failed',
          failCode: upstreamFailCode(model),
          failMsg: (err as Error).message,
        });
      }
      progress = { state: 'running' as const };
    }
    if (progress.state !== 'running') return this.deps.tasks.complete(task, model, progress);
    if (checks >= MAX_CHECKS) {
      return this.deps.tasks.complete(task, model, {
        state: 'failed',
        failCode: upstreamFailCode(model),
        failMsg: 'Upstream did not finish in time',
      });
    }
    await this.deps.store.replace({ ...task, route: { ...task.route!, polls: checks } }, ['processing']);
    await scheduleStep(
      this.deps.scheduler,
      task.taskId,
      'check',
      provider.checkIntervalMs(task, route),
      checks,
    );
  }
}
