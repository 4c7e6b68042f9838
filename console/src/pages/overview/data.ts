import { isoDay } from '../../format';

/** Shapes of the usage, budget and stats APIs (src/accounts/usage-report.ts, budgets.ts; GET /api/v1/stats). */

export interface SourceUsage {
  requests: number;
  spendUsd: number;
}

export interface UsageRow {
  day?: string;
  model?: string;
  keyId?: string;
  accountId?: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  spendUsd: number;
  gateway: SourceUsage;
  tasks: SourceUsage;
}

export interface UsageReport {
  accountId: string | null;
  from: string;
  to: string;
  groupBy: string;
  rows: UsageRow[];
  totals: UsageRow;
}

export interface BudgetView {
  scope: 'account' | 'key';
  keyId?: string;
  period: 'day' | 'month' | 'window';
  limitUsd: number;
  softPercent: number | null;
  periodStart: string;
  periodEnd?: string;
  active: boolean;
  spentUsd: number;
  remainingUsd: number;
  exceeded: boolean;
}

export interface SurfaceStats {
  surface: string;
  requests: number;
  serverErrors: number;
  clientErrors: number;
  errorRate: number | null;
  latencyMs: { p50: number; p95: number; p99: number } | null;
  minutes: {
    at: string | number;
    requests: number;
    serverErrors: number;
    clientErrors: number;
    p95Ms: number | null;
  }[];
}

export interface ServiceStats {
  windowMinutes: number;
  stepSeconds: number;
  from: string | number;
  to: string | number;
  surfaces: SurfaceStats[];
}

export interface AccountSummary {
  accountId: string;
  name: string;
  balanceUsd: number;
  createdAt?: number | string;
}

const DAY_MS = 86_400_000;

/** The last `days` UTC days, oldest first, ending today. */
export function lastDays(days: number, now = Date.now()): string[] {
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(isoDay(new Date(now - i * DAY_MS)));
  return out;
}

/** The first day of this UTC month. */
export function monthStart(now = new Date()): string {
  return `${isoDay(now).slice(0, 7)}-01`;
}

/** Tokens of a usage row as the chart counts them: input and output (cached and reasoning are parts of these). */
export function tokensOf(row: UsageRow): number {
  return row.inputTokens + row.outputTokens;
}
