/**
 * Usage rollups: what each account spent and used, summed as it happens (never by scanning logs at query time).
 *
 * Rows live per account and period (a UTC day `2026-11-26` or month `2026-11`) and per dimension: the account's
 * total (`t`), each model (`m`) and each key (`k`). A row is one packed list of counters (ROLLUP_FIELDS). Spend is
 * written by the ledger posting itself (the same store step), so the rows add up to the ledger to the micro-dollar;
 * gateway requests and tokens come from the usage meter's flushes (src/gateway/meter.ts).
 */

export const ROLLUP_FIELDS = [
  'gatewayRequests',
  'inputTokens',
  'outputTokens',
  'cachedTokens',
  'cacheWriteTokens',
  'reasoningTokens',
  'gatewaySpendMicros',
  'taskRequests',
  'taskSpendMicros',
] as const;
export type RollupField = (typeof ROLLUP_FIELDS)[number];
export const ROLLUP_WIDTH = ROLLUP_FIELDS.length;
/** Index of each field in a packed row. */
export const AT: Record<RollupField, number> = Object.fromEntries(
  ROLLUP_FIELDS.map((f, i) => [f, i]),
) as Record<RollupField, number>;

/** A row's counters in ROLLUP_FIELDS order. */
export type RollupRow = number[];

export type Grain = 'd' | 'm';
export type Dimension = 't' | 'm' | 'k';
/** The field of the total dimension's one row. */
export const TOTAL = 't';

export const USAGE_SOURCES = ['gateway', 'tasks'] as const;
export type UsageSource = (typeof USAGE_SOURCES)[number];

/** What a ledger posting is for, so its money lands on the right rows (credits have none). */
export interface UsageAttribution {
  keyId: string;
  model: string;
  source: UsageSource;
}

/** Counters to add to the rows of one (account, key, model) at one time. */
export interface UsageDelta {
  accountId: string;
  keyId: string;
  model: string;
  at: number;
  counts: RollupRow;
}

export function emptyRow(): RollupRow {
  return new Array<number>(ROLLUP_WIDTH).fill(0);
}

export function addRow(into: RollupRow, more: readonly number[]): RollupRow {
  for (let i = 0; i < ROLLUP_WIDTH; i++) into[i] += more[i] ?? 0;
  return into;
}

export function packRow(row: readonly number[]): string {
  return row.join(',');
}

export function unpackRow(packed: string): RollupRow {
  const row = emptyRow();
  const parts = packed.split(',');
  for (let i = 0; i < ROLLUP_WIDTH && i < parts.length; i++) row[i] = Number(parts[i]) || 0;
  return row;
}

const DAY_MS = 86_400_000;
/** The UTC day last asked for: every posting asks, nearly always for today (no Date and ISO string per call). */
let lastDay = { from: 0, to: 0, iso: '1970-01-01' };

function isoDay(at: number): string {
  if (at >= lastDay.from && at < lastDay.to) return lastDay.iso;
  const from = Math.floor(at / DAY_MS) * DAY_MS;
  lastDay = { from, to: from + DAY_MS, iso: new Date(at).toISOString().slice(0, 10) };
  return lastDay.iso;
}

/** UTC day `YYYY-MM-DD` of a time in ms. */
export function dayOf(at: number): string {
  return isoDay(at);
}

/** UTC month `YYYY-MM` of a time in ms. */
export function monthOf(at: number): string {
  return isoDay(at).slice(0, 7);
}

/** The spend (gateway and tasks) a row holds, in micro-USD. */
export function spendOf(row: readonly number[]): number {
  return row[AT.gatewaySpendMicros] + row[AT.taskSpendMicros];
}

/** The row a posting of `amountMicros` adds: a charge adds spend (and a task charge a request), a refund takes it back. */
export function postingRow(source: UsageSource, kind: 'charge' | 'refund', amountMicros: number): RollupRow {
  const row = emptyRow();
  const signed = kind === 'refund' ? -amountMicros : amountMicros;
  if (source === 'gateway') row[AT.gatewaySpendMicros] = signed;
  else {
    row[AT.taskSpendMicros] = signed;
    if (kind === 'charge') row[AT.taskRequests] = 1;
  }
  return row;
}

/** Where one period's rows are read from: the period and its dimension. */
export interface RollupRead {
  grain: Grain;
  stamp: string;
}

/** A day range split into whole months and the days around them, so a long range reads few rows. */
export function coverRange(from: string, to: string): RollupRead[] {
  const reads: RollupRead[] = [];
  let day = new Date(`${from}T00:00:00Z`);
  const end = new Date(`${to}T00:00:00Z`);
  while (day <= end) {
    const monthEnd = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 0));
    if (day.getUTCDate() === 1 && monthEnd <= end) {
      reads.push({ grain: 'm', stamp: day.toISOString().slice(0, 7) });
      day = new Date(monthEnd.getTime() + 86_400_000);
    } else {
      reads.push({ grain: 'd', stamp: day.toISOString().slice(0, 10) });
      day = new Date(day.getTime() + 86_400_000);
    }
  }
  return reads;
}

/** Every day of a range, in order. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end; at += 86_400_000) days.push(dayOf(at));
  return days;
}

/**
 * Budgets: a spend limit per key or per account over a calendar period (a UTC day or month, spend read from the
 * rollups) or a fixed window (`startsAt` to `endsAt`, spend counted by the postings made inside it).
 */
export const BUDGET_PERIODS = ['day', 'month', 'window'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface Budget {
  period: BudgetPeriod;
  limitMicros: number;
  /** Percent of the limit at which a `budget.threshold` event is raised once per period; null = none. */
  softPercent: number | null;
  /** A window's bounds (ms since the epoch, end exclusive); absent for day and month. */
  startsAt?: number;
  endsAt?: number;
}

/** `account`, or `key:<keyId>`. */
export type BudgetScope = string;
export const accountScope = 'account';
export const keyScope = (keyId: string) => `key:${keyId}`;

export interface BudgetState extends Budget {
  scope: BudgetScope;
  /** The period the spend is for (`YYYY-MM-DD`, `YYYY-MM`, or a window's start in ms). */
  stamp: string;
  spentMicros: number;
}

/** Whether a budget's state is about the period `now` is in (a day or month begun since is a fresh one). */
export function budgetCurrent(state: BudgetState, now: number): boolean {
  if (state.period === 'window') return now >= state.startsAt! && now < state.endsAt!;
  return stampOf(state.period, now) === state.stamp;
}

/** A budget crossed one of its thresholds for the first time in its period (one event per level and period). */
export interface BudgetEvent extends BudgetState {
  accountId: string;
  level: 'soft' | 'hard';
}

/** Why a charge was refused: the first budget it would take over its limit. */
export type BudgetRefusal = BudgetState;

/** `period,limitMicros,softPercent,startsAt,endsAt` (empty fields for what a budget has not). */
export function packBudget(b: Budget): string {
  return `${b.period},${b.limitMicros},${b.softPercent ?? ''},${b.startsAt ?? ''},${b.endsAt ?? ''}`;
}

/** The stamp of the calendar period `at` is in. */
export function stampOf(period: 'day' | 'month', at: number): string {
  return period === 'day' ? dayOf(at) : monthOf(at);
}

/** 0 under the soft threshold, 1 at or over it, 2 at or over the limit. */
export function budgetLevel(b: Budget, spentMicros: number): number {
  if (spentMicros >= b.limitMicros) return 2;
  if (b.softPercent !== null && spentMicros * 100 >= b.limitMicros * b.softPercent) return 1;
  return 0;
}
