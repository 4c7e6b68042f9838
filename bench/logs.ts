/**
 * npm run bench:logs — BENCH_LOGS_ROWS (10,000,000) request-log rows written to PostgreSQL through the log store's
 * own insert (COPY in the binary format, 2,000 a batch, one at a time: what one replica's writer sends), spread over
 * 1,000 accounts, 5 keys each, 10 models and the last 10 days (10 daily partitions). Reports rows/s sustained against a
 * baseline measured in the same run on the same table and indexes: the server inserting generated rows itself
 * (INSERT ... SELECT generate_series, no client, no network), the ceiling of any client. Then the console's default
 * query (an account's newest 50 rows) and its filtered and second pages, BENCH_LOGS_QUERIES (300) each on random
 * accounts: p50 and p95 against the 100 ms target.
 *
 * It runs on a PostgreSQL of its own (initdb into a temp dir, default settings, a free port), stopped and removed at
 * the end, so the machine's shared server keeps its buffers; BENCH_DATABASE_URL names another server (a database is
 * created there and dropped).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { BUILT_SRC, gatewayRow, machineNote, median, QUIET_LOGGER, writeSection } from './lib';
import { benchDatabase } from './pg-server';
import type { PostgresLogStore as Store } from '../src/logs/postgres/store';
import type { RequestLogRow } from '../src/logs/types';

const ROWS = Number(process.env.BENCH_LOGS_ROWS ?? 10_000_000);
const QUERIES = Number(process.env.BENCH_LOGS_QUERIES ?? 300);
const BATCH = 2000;
const ACCOUNTS = 1000;
const DAYS = 10;
const DAY = 86_400_000;
const MODELS = Array.from({ length: 10 }, (_, i) => `model-${i}`);

/** The log store as built, with its SQL migrations (scripts/build-bench.js). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PostgresLogStore } = require(path.join(BUILT_SRC, 'logs', 'postgres', 'store.js')) as {
  PostgresLogStore: typeof Store;
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

function rowAt(i: number, time: number): RequestLogRow {
  const account = i % ACCOUNTS;
  const failed = i % 97 === 0;
  return gatewayRow({
    time,
    requestId: `req-${i}`,
    accountId: `acct_${String(account).padStart(6, '0')}`,
    keyId: `key_${account}_${i % 5}`,
    model: MODELS[i % MODELS.length],
    status: failed ? 529 : 200,
    errorType: failed ? 'upstream_529' : null,
    inputTokens: 1000 + (i % 500),
    outputTokens: 100 + (i % 50),
    cachedTokens: i % 7,
    reasoningTokens: i % 3,
    costMicros: 1234 + (i % 1000),
    latencyMs: 200 + (i % 800),
    ttfbMs: 50 + (i % 100),
    clientIp: '10.0.0.1',
  });
}

async function main(): Promise<void> {
  const machine = machineNote();
  const database = await benchDatabase('genway_bench_logs');
  const url = database.url;
  const store = new PostgresLogStore(url, QUIET_LOGGER, { requestDays: 30, bodyDays: 3, auditDays: 400 });
  const db = new Client({ connectionString: url });
  try {
    await store.ping();
    await store.maintain(Date.now());
    await db.connect();
    const start = Date.now() - DAYS * DAY;
    // Partitions for every day the rows fall on.
    for (let d = 0; d <= DAYS; d++) {
      await store.insertRequests(randomUUID(), [rowAt(ROWS + d, start + d * DAY)], []);
    }

    // Baseline: the server inserting 200,000 generated rows into the same table (same indexes), no client at all.
    const baseRows = 200_000;
    const t0 = performance.now();
    await db.query(
      `INSERT INTO request_logs (time, request_id, account_id, key_id, surface, method, route, model, upstream,
         upstream_model, status, input_tokens, output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens,
         cost_micros, latency_ms, ttfb_ms, user_agent, client_ip)
       SELECT to_timestamp(($1::bigint + g * 4)/1000.0), 'base-' || g, 'acct_' || lpad((g % 1000)::text, 6, '0'),
         'key_' || (g % 1000) || '_' || (g % 5), 'gateway', 'POST', '/v1/messages', 'model-' || (g % 10),
         'anthropic', 'model-' || (g % 10), 200, 1000, 100, 0, 0, 0, 1234, 200, 50, 'Anthropic/JS 0.60.0',
         '10.0.0.1'
       FROM generate_series(1, $2::int) g`,
      [start, baseRows],
    );
    const baseRate = baseRows / ((performance.now() - t0) / 1000);
    process.stderr.write(`baseline: ${baseRate.toFixed(0)} rows/s\n`);

    // The writer's path: batches of 2,000, one at a time, times spread over the 10 days in order.
    const step = (DAYS * DAY) / ROWS;
    const w0 = performance.now();
    let lastReport = w0;
    const windows: number[] = [];
    let windowRows = 0;
    for (let i = 0; i < ROWS; i += BATCH) {
      const rows: RequestLogRow[] = [];
      for (let j = i; j < Math.min(ROWS, i + BATCH); j++) rows.push(rowAt(j, Math.floor(start + j * step)));
      await store.insertRequests(randomUUID(), rows, []);
      windowRows += rows.length;
      const now = performance.now();
      if (now - lastReport > 10_000) {
        windows.push(windowRows / ((now - lastReport) / 1000));
        process.stderr.write(
          `${(i + BATCH).toLocaleString('en')} rows, ${windows.at(-1)!.toFixed(0)} rows/s over the last 10 s\n`,
        );
        lastReport = now;
        windowRows = 0;
      }
    }
    const seconds = (performance.now() - w0) / 1000;
    const rate = ROWS / seconds;
    await db.query('ANALYZE request_logs');
    const [{ bytes }] = (await db.query(`SELECT pg_database_size(current_database()) AS bytes`)).rows;

    // The console's queries on random accounts.
    const timed = async (run: (account: string) => Promise<unknown>) => {
      const ms: number[] = [];
      for (let q = 0; q < QUERIES; q++) {
        const account = `acct_${String(Math.floor(Math.random() * ACCOUNTS)).padStart(6, '0')}`;
        const t = performance.now();
        await run(account);
        ms.push(performance.now() - t);
      }
      return { p50: median(ms), p95: percentile(ms, 95) };
    };
    const cases: [string, (account: string) => Promise<unknown>][] = [
      ["default: an account's newest 50", (a) => store.requests({ accountId: a }, 50)],
      [
        'second page (cursor)',
        async (a) => {
          const first = await store.requests({ accountId: a }, 50);
          return store.requests({ accountId: a }, 50, first.next ?? undefined);
        },
      ],
      ['model filter', (a) => store.requests({ accountId: a, model: 'model-3' }, 50)],
      ['errors (status 5xx)', (a) => store.requests({ accountId: a, status: [500, 599] }, 50)],
      [
        'one key, one day',
        (a) =>
          store.requests(
            { keyId: `key_${Number(a.slice(5))}_2`, from: start + 3 * DAY, to: start + 4 * DAY },
            50,
          ),
      ],
      ['admin: every account, newest 50', () => store.requests({}, 50)],
    ];
    const results: string[] = [];
    for (const [name, run] of cases) {
      await timed(run); // warm
      const r = await timed(run);
      results.push(`| ${name} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.p95 < 100 ? 'yes' : 'no'} |`);
      process.stderr.write(`${name}: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms\n`);
    }
    const body = [
      `${ROWS.toLocaleString('en')} rows over ${ACCOUNTS} accounts (5 keys each), 10 models and ${DAYS} daily partitions, written through \`PostgresLogStore.insertRequests\` (COPY of ${BATCH} rows in the binary format, one batch at a time: one replica's writer), on ${process.env.BENCH_DATABASE_URL ? 'the given server' : 'a private PostgreSQL (default settings but shared_buffers 512 MB, fsync on)'}. ${machine}`,
      '',
      '| writer | rows/s | against the baseline |',
      '| - | - | - |',
      `| baseline: the server inserting generated rows (\`INSERT ... SELECT generate_series\`, no client) | ${baseRate.toFixed(0)} | 1.00x |`,
      `| Genway's writer, sustained over ${seconds.toFixed(0)} s (10-s windows: min ${Math.min(...windows).toFixed(0)}, median ${median(windows).toFixed(0)}) | ${rate.toFixed(0)} | ${(rate / baseRate).toFixed(2)}x |`,
      '',
      `Database size after: ${(Number(bytes) / 2 ** 30).toFixed(1)} GiB (rows and their 7 indexes). Queries, ${QUERIES} each on random accounts after a warm-up round, through \`PostgresLogStore.requests\` (what \`GET /api/v1/logs\` runs):`,
      '',
      '| query | p50 ms | p95 ms | under 100 ms |',
      '| - | - | - | - |',
      ...results,
    ].join('\n');
    process.stdout.write(`${body}\n`);
    if (ROWS >= 10_000_000) writeSection('Request logs on PostgreSQL (bench:logs)', body);
  } finally {
    await store.close();
    await db.end().catch(() => undefined);
    await database.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
