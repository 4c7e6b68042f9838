import { z } from 'zod';
import { ApiError } from '../errors';
import { usdToMicros } from '../money';
import type { BillingSnapshot, Category, PrepareContext, PreparedTask, TaskModel } from './types';

/** One model family: the zod definition (validation + JSON Schema), its prices, polling and failure codes. */
export interface FamilyDefinition<S extends z.ZodType = z.ZodType> {
  family: string;
  category: Category;
  displayName: string;
  schema: S;
  failCodes: readonly string[];
  /** Price rules as shown by GET /models/{id} (USD); the charge itself is computed by `plan`. */
  pricing: Record<string, unknown>;
  /** Polling guidance rows as shown by GET /models/{id}. */
  polling: {
    workload: string;
    firstPollSeconds: number | [number, number];
    intervalSeconds: number | [number, number];
  }[];
  /** Prices and plans a validated input; may reject with a 400 (e.g. media the probe cannot read). */
  plan(input: z.output<S>, context: PrepareContext): Promise<PreparedTask> | PreparedTask;
  settle?: TaskModel['settle'];
}

/** Parses a model input with its family's schema; the first problem becomes a 400 naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (input === undefined || input === null) throw new ApiError('invalid_request', 'input is required');
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new ApiError('invalid_request', 'input must be an object');
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((k) => `input.${k}`).join(', ');
    throw new ApiError(
      'invalid_request',
      `${keys} ${issue.keys.length > 1 ? 'are not fields' : 'is not a field'} of this model`,
    );
  }
  const message = issue.message.startsWith('input')
    ? issue.message
    : `input.${issue.path.join('.')}: ${issue.message}`;
  throw new ApiError('invalid_request', message);
}

type Micros<T> = { readonly [K in keyof T]: T[K] extends number ? number : Micros<T[K]> };

/**
 * A USD price table as the catalog shows it, in the integer micro-USD that is charged: each family writes its prices
 * once, in USD, and charges from this (test/unit/catalog-prices.test.ts checks every shown price against a charge).
 */
export function inMicros<T extends object>(usd: T): Micros<T> {
  return Object.fromEntries(
    Object.entries(usd).map(([key, value]) => [
      key,
      typeof value === 'number' ? usdToMicros(value) : inMicros(value as object),
    ]),
  ) as Micros<T>;
}

/** Integer micro-USD for `millis` milliseconds at `ratePerSecondMicros`, rounded half up. */
export function perSecondMicros(ratePerSecondMicros: number, millis: number): number {
  return Math.floor((ratePerSecondMicros * millis + 500) / 1000);
}

/** Seconds (as a float from a media header) to whole milliseconds, half up. */
export function toMillis(seconds: number): number {
  return Math.floor(seconds * 1000 + 0.5);
}

/**
 * Settles a smart-duration (`duration: -1`) video task: billable = input + actual output seconds, each rounded half
 * up to 3 decimals (whole milliseconds), charged at the per-second rate and rounded half up to the micro-USD.
 */
export function settleSmartDuration(
  settlement: NonNullable<PreparedTask['settlement']>,
  outputSeconds: number,
): { finalMicros: number; billing: BillingSnapshot } {
  const inputMs = toMillis(settlement.inputVideoSeconds);
  const outputMs = toMillis(outputSeconds);
  const totalMs = inputMs + outputMs;
  return {
    finalMicros: perSecondMicros(settlement.ratePerSecondMicros, totalMs),
    billing: {
      settlementState: 'final',
      inputVideoSeconds: inputMs / 1000,
      outputVideoSeconds: outputMs / 1000,
      totalBillableSeconds: totalMs / 1000,
      unit: 'second',
      rounding: 'round half up to 3 decimal places',
      inputVideoCount: settlement.inputVideoCount,
      outputVideoCount: 1,
    },
  };
}

/** The JSON Schema of a family's input, from the same zod definition that validates it. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
