import { z } from 'zod';
import type { Clock } from '../clock';
import { ApiError } from '../errors';
import { parseOrThrow } from '../http/validate';
import type { AccountStore } from './store';
import {
  addRow,
  AT,
  coverRange,
  dayOf,
  daysOf,
  emptyRow,
  spendOf,
  TOTAL,
  type Dimension,
  type RollupRow,
} from './usage';

/** The longest range one report covers. */
const MAX_DAYS = 1_000;

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date YYYY-MM-DD' })
  .refine((d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && dayOf(Date.parse(`${d}T00:00:00Z`)) === d, {
    error: 'must be a real calendar date YYYY-MM-DD',
  });

const GROUPINGS = ['day', 'model', 'key', 'day,model'] as const;

export const usageQuerySchema = z.strictObject({
  from: date.optional(),
  to: date.optional(),
  groupBy: z.enum(GROUPINGS, { error: `must be one of ${GROUPINGS.join(', ')}` }).default('day'),
  format: z.enum(['json', 'csv'], { error: 'must be one of json, csv' }).default('json'),
});

/** The admin's report also groups by account (the whole service's spend per account). */
export const adminUsageQuerySchema = usageQuerySchema.extend({
  groupBy: z
    .enum([...GROUPINGS, 'account'], { error: `must be one of ${[...GROUPINGS, 'account'].join(', ')}` })
    .default('day'),
  accountId: z.string().min(1).max(200).optional(),
});

export type UsageQuery = z.infer<typeof adminUsageQuerySchema>;
export type GroupBy = UsageQuery['groupBy'];

/** Money and counts of one source. */
interface SourceView {
  requests: number;
  spendMicros: number;
  spendUsd: number;
}

export interface UsageRowView {
  accountId?: string;
  day?: string;
  model?: string;
  keyId?: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  spendMicros: number;
  spendUsd: number;
  gateway: SourceView;
  tasks: SourceView;
}

export interface UsageReport {
  accountId: string | null;
  from: string;
  to: string;
  groupBy: GroupBy;
  rows: UsageRowView[];
  totals: UsageRowView;
}

/** USD from micro-USD without binary rounding noise in the last digits (6 decimals at most). */
const usd = (micros: number) => Number((micros / 1e6).toFixed(6));

function rowView(row: RollupRow): UsageRowView {
  const gatewaySpend = row[AT.gatewaySpendMicros];
  const taskSpend = row[AT.taskSpendMicros];
  return {
    requests: row[AT.gatewayRequests] + row[AT.taskRequests],
    inputTokens: row[AT.inputTokens],
    outputTokens: row[AT.outputTokens],
    cachedTokens: row[AT.cachedTokens],
    cacheWriteTokens: row[AT.cacheWriteTokens],
    reasoningTokens: row[AT.reasoningTokens],
    spendMicros: spendOf(row),
    spendUsd: usd(spendOf(row)),
    gateway: { requests: row[AT.gatewayRequests], spendMicros: gatewaySpend, spendUsd: usd(gatewaySpend) },
    tasks: { requests: row[AT.taskRequests], spendMicros: taskSpend, spendUsd: usd(taskSpend) },
  };
}

type Column = 'day' | 'model' | 'keyId' | 'accountId';

/** The columns that name a row of each grouping. */
const GROUP_COLUMNS: Record<GroupBy, Column[]> = {
  day: ['day'],
  model: ['model'],
  key: ['keyId'],
  'day,model': ['day', 'model'],
  account: ['accountId'],
};
const DIMENSION: Record<'model' | 'key', Dimension> = { model: 'm', key: 'k' };

/** Joins a row's names into one map key (none of them holds a NUL). */
const SEP = '\u0000';

/** Exact decimal USD of micro-USD for CSV (no float formatting). */
function usdText(micros: number): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / 1e6)}.${String(abs % 1e6).padStart(6, '0')}`;
}

function csvCell(text: string): string {
  return /[",\n\r]/.test(text) || /^[=+\-@\t]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function usageCsv(report: UsageReport): string {
  const columns = GROUP_COLUMNS[report.groupBy];
  const header = [
    ...columns,
    'requests',
    'input_tokens',
    'output_tokens',
    'cached_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'gateway_requests',
    'gateway_spend_usd',
    'task_requests',
    'task_spend_usd',
    'spend_usd',
  ];
  const lines = [header.join(',')];
  for (const r of report.rows) {
    lines.push(
      [
        ...columns.map((column) => csvCell(r[column] ?? '')),
        r.requests,
        r.inputTokens,
        r.outputTokens,
        r.cachedTokens,
        r.cacheWriteTokens,
        r.reasoningTokens,
        r.gateway.requests,
        usdText(r.gateway.spendMicros),
        r.tasks.requests,
        usdText(r.tasks.spendMicros),
        usdText(r.spendMicros),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Usage reports from the rollups: a range of whole days (UTC), grouped by day, model or key, for one account or
 * all. A long range reads whole months where it can (src/accounts/usage.ts coverRange), so a year is about a dozen
 * month rows plus the days at its ends, whatever the number of calls.
 */
export class UsageReports {
  constructor(
    private readonly store: Pick<AccountStore, 'readUsage' | 'listAccounts'>,
    private readonly clock: Clock,
    /** Writes what this replica metered but has not flushed yet (read-your-writes for the caller's own calls). */
    private readonly flush: () => Promise<void> = async () => undefined,
  ) {}

  parse(query: unknown, admin: true): UsageQuery;
  parse(query: unknown, admin?: false): z.infer<typeof usageQuerySchema>;
  parse(query: unknown, admin = false) {
    return parseOrThrow(admin ? adminUsageQuerySchema : usageQuerySchema, query, 'query');
  }

  /** One account's report, or every account's summed (accountId null). */
  async report(accountId: string | null, query: Omit<UsageQuery, 'format'>): Promise<UsageReport> {
    const today = dayOf(this.clock.now());
    const to = query.to ?? today;
    const from = query.from ?? `${to.slice(0, 7)}-01`;
    if (from > to) throw new ApiError('invalid_request', 'query.from: must not be after query.to');
    const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
    if (span > MAX_DAYS)
      throw new ApiError('invalid_request', `query.from: the range must span at most ${MAX_DAYS} days`);
    await this.flush();
    const accounts = accountId ? [accountId] : (await this.store.listAccounts()).map((a) => a.accountId);
    const groups = new Map<string, RollupRow>();
    const add = (name: string, row: RollupRow) => {
      const into = groups.get(name);
      if (into) addRow(into, row);
      else groups.set(name, addRow(emptyRow(), row));
    };
    await Promise.all(
      accounts.map(async (account) => {
        const { groupBy } = query;
        if (groupBy === 'day' || groupBy === 'day,model') {
          const days = daysOf(from, to);
          const rows = await this.store.readUsage(
            account,
            groupBy === 'day' ? 't' : 'm',
            days.map((stamp) => ({ grain: 'd', stamp })),
          );
          rows.forEach((period, i) => {
            if (groupBy === 'day') {
              const row = period.get(TOTAL);
              if (row) add(days[i], row);
            } else for (const [model, row] of period) add(`${days[i]}${SEP}${model}`, row);
          });
          return;
        }
        if (groupBy === 'account') {
          for (const period of await this.store.readUsage(account, 't', coverRange(from, to))) {
            const row = period.get(TOTAL);
            if (row) add(account, row);
          }
          return;
        }
        const rows = await this.store.readUsage(account, DIMENSION[groupBy], coverRange(from, to));
        for (const period of rows) for (const [name, row] of period) add(name, row);
      }),
    );
    const columns = GROUP_COLUMNS[query.groupBy];
    const names = [...groups.keys()].sort();
    const totals = emptyRow();
    const rows = names.map((name) => {
      const row = groups.get(name)!;
      addRow(totals, row);
      const parts = name.split(SEP);
      return { ...Object.fromEntries(columns.map((column, i) => [column, parts[i]])), ...rowView(row) };
    });
    return { accountId, from, to, groupBy: query.groupBy, rows, totals: rowView(totals) };
  }
}
