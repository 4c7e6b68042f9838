import type { ModelRoute } from '../catalog/config';
import type { TaskModel } from '../catalog/types';
import type { TaskRecord } from '../tasks/types';

/**
 * Where a task runs. The task worker owns states, money and retries; a provider only starts a job, says where it
 * stands, and stops it. Two implementations: the built-in sandbox and the relay to an upstream that speaks this API.
 *
 * A provider that pushes events instead of being asked would implement `check` as a read of the last event it
 * received; the worker's schedule of checks stays the same.
 */
export interface Provider {
  /**
   * True when `start` does no I/O and cannot fail: a submission then starts the task itself, written `processing`
   * in the same step as its charge, with no start job (the sandbox; a network provider starts in the worker).
   */
  readonly startsInline: boolean;
  /** Starts the task's job on `route`. Throws ProviderError; a retryable one lets the task try its next route. */
  start(task: TaskRecord, model: TaskModel, route: ModelRoute): Promise<StartedJob> | StartedJob;
  /** Where the job stands. Throws ProviderError; a retryable one is checked again at the next interval. */
  check(task: TaskRecord, model: TaskModel, route: ModelRoute): Promise<JobProgress>;
  /** Stops the job where the provider can (best effort: the task is already terminal when this is called). */
  cancel(task: TaskRecord, route: ModelRoute): Promise<void>;
  /** How long to wait between checks of a job still running. */
  checkIntervalMs(task: TaskRecord, route: ModelRoute): number;
}

export interface StartedJob {
  /** The upstream's id of the job, when it has one (kept on the task's route). */
  upstreamTaskId?: string;
  /** When to check it first. */
  firstCheckMs: number;
}

/** A terminal outcome, as a provider reports it. */
export type JobOutcome =
  | { state: 'success'; resultUrls: string[]; outputSeconds?: number }
  | { state: 'failed'; failCode: string; failMsg: string };

export type JobProgress = JobOutcome | { state: 'running' };

/** Why a provider call failed: `retryable` (5xx, timeout, network, 429) may succeed elsewhere or later. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/** The model's own code for "the provider failed". */
export function upstreamFailCode(model: TaskModel): string {
  for (const code of ['UPSTREAM_ERROR', 'StreamError']) if (model.failCodes.includes(code)) return code;
  return model.failCodes[model.failCodes.length - 1];
}
