/**
 * npm run bench:usage — usage reports over a year of daily rows for BENCH_USAGE_KEYS keys (default 1,000) and
 * BENCH_USAGE_MODELS models (10), in both store modes: how long `GET /api/v1/usage` takes to build its report
 * (grouped by key, model and day) for a year that does not start on the 1st, against a baseline measured in the same
 * run that reads the same range from day rows only (what the report would cost without month rows). Bounded: the
 * rows written and BENCH_USAGE_ROUNDS (20) reports per case.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dayOf, monthOf, packRow, addRow, emptyRow, AT, daysOf } from '../src/accounts/usage';
import { UsageReports } from '../src/accounts/usage-report';
import type { AccountStore } from '../src/accounts/store';
import { systemClock } from '../src/clock';
import type * as MemoryModule from '../src/store/memory';
import type * as RedisModule from '../src/store/redis';
import { redisKeys } from '../src/store/keys';
import { BUILT_SRC, machineNote, median, writeSection } from './lib';

/** The stores as built, with their Lua scripts (scripts/build-bench.js). */
const dist = (file: string) => pathToFileURL(path.join(BUILT_SRC, file)).href;

const KEYS = Number(process.env.BENCH_USAGE_KEYS ?? 1000);
const MODELS = Number(process.env.BENCH_USAGE_MODELS ?? 10);
const ROUNDS = Number(process.env.BENCH_USAGE_ROUNDS ?? 20);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ACCOUNT = 'acct_bench_usage';
const DAY = 86_400_000;

/** A year ending yesterday (so it starts mid-month): 365 days. */
const to = dayOf(Date.now() - DAY);
const from = dayOf(Date.parse(`${to}T00:00:00Z`) - 364 * DAY);
const days = daysOf(from, to);

/** One key's row on one day: a few calls with tokens and spend from both sources. */
function rowFor(k: number, d: number) {
  const row = emptyRow();
  row[AT.gatewayRequests] = 1 + ((k + d) % 5);
  row[AT.inputTokens] = 1000 + k;
  row[AT.outputTokens] = 100 + d;
  row[AT.cachedTokens] = k % 7;
  row[AT.reasoningTokens] = d % 3;
  row[AT.gatewaySpendMicros] = 1234 + k;
  row[AT.taskRequests] = d % 2;
  row[AT.taskSpendMicros] = (d % 2) * 30_000;
  return row;
}

const keyId = (k: number) => `key_${String(k).padStart(6, '0')}`;
const modelOf = (k: number) => `model-${k % MODELS}`;

/** Every rollup row a year of such usage leaves: by day and by month, per total, model and key. */
function rollups() {
  const out = new Map<string, Map<string, number[]>>();
  const add = (hash: string, field: string, row: number[]) => {
    let rows = out.get(hash);
    if (!rows) out.set(hash, (rows = new Map()));
    const into = rows.get(field);
    if (into) addRow(into, row);
    else rows.set(field, addRow(emptyRow(), row));
  };
  days.forEach((day, d) => {
    const month = monthOf(Date.parse(`${day}T00:00:00Z`));
    for (let k = 0; k < KEYS; k++) {
      const row = rowFor(k, d);
      for (const [grain, stamp] of [
        ['d', day],
        ['m', month],
      ] as const) {
        add(`${grain}|${stamp}|t`, 't', row);
        add(`${grain}|${stamp}|m`, modelOf(k), row);
        add(`${grain}|${stamp}|k`, keyId(k), row);
      }
    }
  });
  return out;
}

async function fill(store: AccountStore, write: () => Promise<void>) {
  await store.createAccount({ accountId: ACCOUNT, name: 'bench', createdAt: 0, webhookScheme: 'genway' });
  await write();
}

function timeIt(rounds: number, run: () => Promise<unknown>): Promise<number[]> {
  return (async () => {
    const times: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await run();
      times.push(performance.now() - start);
    }
    return times;
  })();
}

/** The baseline: the same grouping from day rows only (one read per day). */
async function fromDaysOnly(store: AccountStore, dimension: 'k' | 'm') {
  const periods = await store.readUsage(
    ACCOUNT,
    dimension,
    days.map((stamp) => ({ grain: 'd' as const, stamp })),
  );
  const sums = new Map<string, number[]>();
  for (const period of periods)
    for (const [name, row] of period) {
      const into = sums.get(name);
      if (into) addRow(into, row);
      else sums.set(name, addRow(emptyRow(), row));
    }
  return sums;
}

async function measure(mode: string, store: AccountStore) {
  const reports = new UsageReports(store, systemClock);
  const rows: string[] = [];
  for (const groupBy of ['key', 'model', 'day'] as const) {
    const report = () => reports.report(ACCOUNT, { groupBy, from, to });
    const check = await report();
    const expectedRows = groupBy === 'key' ? KEYS : groupBy === 'model' ? MODELS : days.length;
    if (check.rows.length !== expectedRows)
      throw new Error(`${mode} ${groupBy}: ${check.rows.length} rows, expected ${expectedRows}`);
    const times = await timeIt(ROUNDS, report);
    let baseline = '—';
    if (groupBy !== 'day') {
      const base = await timeIt(Math.max(3, Math.floor(ROUNDS / 4)), () =>
        fromDaysOnly(store, groupBy === 'key' ? 'k' : 'm'),
      );
      baseline = `${median(base).toFixed(1)} ms`;
    }
    const sorted = [...times].sort((a, b) => a - b);
    rows.push(
      `| ${mode} | ${groupBy} | ${check.rows.length} | ${median(times).toFixed(1)} ms | ${sorted[sorted.length - 1].toFixed(1)} ms | ${baseline} |`,
    );
    process.stdout.write(`${rows[rows.length - 1]}\n`);
  }
  return rows;
}

async function main() {
  const started = Date.now();
  const note = machineNote();
  const { createMemoryStore } = (await import(dist('store/memory/index.js'))) as typeof MemoryModule;
  const { createRedisStore } = (await import(dist('store/redis/index.js'))) as typeof RedisModule;
  const memory = createMemoryStore({ taskRetentionMs: DAY, ledgerRetentionMs: Infinity });
  await fill(memory.accounts, async () => {
    // The embedded store's own write path: one addUsage per (day, key) row, as the meter's flushes do.
    days.forEach((day, d) => {
      for (let k = 0; k < KEYS; k++)
        void memory.accounts.addUsage({
          accountId: ACCOUNT,
          keyId: keyId(k),
          model: modelOf(k),
          at: Date.parse(`${day}T12:00:00Z`),
          counts: rowFor(k, d),
        });
    });
  });
  const table = [
    '| store | groupBy | rows | median | slowest | baseline: day rows only (median) |',
    '| - | - | - | - | - | - |',
  ];
  table.push(...(await measure('embedded', memory.accounts)));

  const prefix = `bench-usage-${process.pid}`;
  const redis = createRedisStore(REDIS_URL, prefix, { taskRetentionMs: DAY, ledgerRetentionMs: Infinity });
  try {
    await fill(redis.accounts, async () => {
      // Written directly as the rollup hashes the Lua scripts leave (packed rows), in pipelines: 365k script runs
      // would take minutes and measure the writes, not the report.
      const keys = redisKeys(prefix);
      let pipeline = redis.redis.pipeline();
      let queued = 0;
      for (const [hash, rows] of rollups()) {
        const [grain, stamp, dimension] = hash.split('|') as ['d' | 'm', string, 't' | 'm' | 'k'];
        const fields: string[] = [];
        for (const [field, row] of rows) fields.push(field, packRow(row));
        pipeline.hset(keys.usage(ACCOUNT, grain, stamp, dimension), ...fields);
        if (++queued % 50 === 0) {
          await pipeline.exec();
          pipeline = redis.redis.pipeline();
        }
      }
      await pipeline.exec();
    });
    table.push(...(await measure('redis', redis.accounts)));
  } finally {
    const keys = await redis.redis.keys(`${prefix}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.redis.del(...keys.slice(i, i + 500));
    await redis.close();
  }

  const body = [
    `A year of daily usage rows (${from} to ${to}, ${days.length} days) for ${KEYS} keys and ${MODELS} models, one account; ${ROUNDS} reports per case. "median" is the time to build the whole report (JSON rows, before serialisation) as \`GET /api/v1/usage\` does: whole months from month rows, the days at both ends from day rows. The baseline reads the same range from day rows only. Target: under 100 ms for the year.`,
    '',
    note,
    '',
    ...table,
    '',
    `Command: \`npm run bench:usage\` (${Math.round((Date.now() - started) / 1000)} s).`,
  ].join('\n');
  writeSection('Usage reports', body);
  process.stdout.write(`${body}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
