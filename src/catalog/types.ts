import type { MediaProbe } from '../outbound/types';
import type { ModelRoute } from './config';

export type Category = 'image' | 'video' | 'audio' | 'text';
export type IntegrationType = 'task_api' | 'llm_gateway';

/** What a validated submission becomes: everything the task service needs, computed by the model's family. */
export interface PreparedTask {
  /** The input as the task will run it: defaults applied, numeric strings turned into numbers, ignored fields dropped. */
  input: Record<string, unknown>;
  /** Taken atomically at submission (integer micro-USD). */
  chargeMicros: number;
  output: {
    kind: 'image' | 'video' | 'audio';
    /** Output seconds when known at submission (video with a positive or fixed duration). */
    seconds?: number;
  };
  /** Only for `duration: -1` (smart duration): how the pre-charge is settled when the task succeeds. */
  settlement?: {
    ratePerSecondMicros: number;
    /** Sum of the reference videos' durations in seconds, exact (not yet rounded). */
    inputVideoSeconds: number;
    inputVideoCount: number;
  };
  /** From the model's polling guidance for this workload. */
  polling: { firstPollSeconds: number; intervalSeconds: number };
}

/** The `billing` object of a settled `duration: -1` task, exactly as the spec lists it. */
export interface BillingSnapshot {
  settlementState: 'final';
  inputVideoSeconds: number;
  outputVideoSeconds: number;
  totalBillableSeconds: number;
  unit: 'second';
  rounding: 'round half up to 3 decimal places';
  inputVideoCount: number;
  outputVideoCount: number;
}

export interface PrepareContext {
  probe: MediaProbe;
}

export interface TaskModel {
  id: string;
  slug?: string;
  family: string;
  category: Category;
  displayName: string;
  /** The failure codes a task of this model may end with. */
  failCodes: readonly string[];
  /** JSON Schema of `input`, generated from the same zod definition that validates it. */
  inputSchema: Record<string, unknown>;
  /** Where its tasks run (sandbox or relay upstreams), in configured order. */
  routes: readonly ModelRoute[];
  /**
   * Validates `input` (the whole `input` member of the body, possibly missing) and prices it. Throws
   * ApiError('invalid_request') whose message names the field and the rule, e.g.
   * `input.duration must be -1 or an integer from 2 to 30`. Probes reference media where the family needs it.
   */
  prepare(input: unknown, context: PrepareContext): Promise<PreparedTask>;
  /** Final charge and billing object of a settled smart-duration task. */
  settle?(
    settlement: NonNullable<PreparedTask['settlement']>,
    outputSeconds: number,
  ): {
    finalMicros: number;
    billing: BillingSnapshot;
  };
  /** What GET /api/v1/models/{idOrSlug} shows: schema, price rules, polling guidance, failure codes. */
  describe(): Record<string, unknown>;
}

export interface Catalog {
  get(idOrSlug: string): TaskModel | undefined;
  list(): TaskModel[];
}
