/**
 * npm run bench:logs:writer [-- <other checkout, built with scripts/build-bench.js>] — Genway's own CPU per request
 * row it writes to PostgreSQL: the row's line, its wait in the queue and the batch the pg client sends, in this
 * process (pinned to CPU 1), against a PostgreSQL of the run's own pinned to CPU 0. The database's work is not in it:
 * it is what bench:logs:gateway's closed loop also measures, on the CPU its load generator shares.
 *
 * Each round runs the same loop with and without the writer: per simulated call, about 6 KB of short-lived garbage
 * (a call's own allocations, so the young generation turns over as it does under load, and rows that wait for their
 * batch meet the collections a real queue meets), and with the writer a row pushed; every 2,000 calls (a batch) the
 * flush is awaited. The row's cost is the difference of CPU (process.cpuUsage: every thread of this process) per
 * call. Given another checkout, its writer runs the same loop in turns with this one's. Bounded: BENCH_ROUNDS x
 * variants x BENCH_WRITER_ROWS.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { BUILT_SRC, gatewayRow, machineNote, median, QUIET_LOGGER, ROOT, writeSection } from './lib';
import { benchDatabase } from './pg-server';
import { pin } from './proxies';
import type { LogWriter as Writer } from '../src/logs/writer';
import type { PostgresLogStore as Store } from '../src/logs/postgres/store';
import type { createMetrics as CreateMetrics } from '../src/observability/metrics';
import type { RequestLogRow } from '../src/logs/types';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROWS = Number(process.env.BENCH_WRITER_ROWS ?? 100_000);
const BATCH = 2000;

interface Built {
  name: string;
  Writer: typeof Writer;
  Store: typeof Store;
  createMetrics: typeof CreateMetrics;
}

function built(name: string, src: string): Built {
  /* eslint-disable @typescript-eslint/no-require-imports -- a build chosen at run time */
  return {
    name,
    Writer: (require(path.join(src, 'logs', 'writer.js')) as { LogWriter: typeof Writer }).LogWriter,
    Store: (require(path.join(src, 'logs', 'postgres', 'store.js')) as { PostgresLogStore: typeof Store })
      .PostgresLogStore,
    createMetrics: (
      require(path.join(src, 'observability', 'metrics.js')) as { createMetrics: typeof CreateMetrics }
    ).createMetrics,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** A row as a call of bench:gateway makes it: µs durations, a UUID request id, the SDK's user agent. */
function rowAt(i: number): RequestLogRow {
  const now = performance.now();
  return gatewayRow({
    time: Date.now(),
    requestId: randomUUID(),
    accountId: `acct_${i % 1000}`,
    keyId: `key_${i % 5000}`,
    model: 'claude-bench',
    inputTokens: 12 + (i % 50),
    latencyMs: Math.round((performance.now() - now + 0.8 + (i % 1000) / 997) * 1000) / 1000,
    ttfbMs: Math.round((0.6 + (i % 700) / 701) * 1000) / 1000,
    requestBytes: 108,
    responseBytes: 612,
  });
}

/** A call's own garbage, about 6 KB that dies young (the last call's is kept, so none is optimised away). */
export let lastCall: unknown;
function callGarbage(i: number): void {
  const headers: Record<string, string> = {};
  for (let h = 0; h < 12; h++) headers[`x-header-${h}`] = `value-${i}-${h}`;
  lastCall = {
    headers,
    body: JSON.parse(`{"model":"claude-bench","max_tokens":64,"n":${i}}`),
    chunks: [Buffer.alloc(600)],
  };
}

/** CPU µs per call of `ROWS` calls, rows pushed to `writer` when given. */
async function loop(writer: Writer | undefined, from: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < ROWS; i++) {
    callGarbage(from + i);
    writer?.pushRequest(rowAt(from + i));
    if ((i + 1) % BATCH === 0) {
      if (writer) await writer.flush();
      else await new Promise((r) => setImmediate(r));
    }
  }
  if (writer) await writer.flush();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ROWS;
}

async function main(): Promise<void> {
  const machine = machineNote();
  pin(process.pid, 1);
  const commit = (dir: string) =>
    execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const builds = [built(`this checkout (${commit(ROOT)})`, BUILT_SRC)];
  const other = process.argv[2] && path.resolve(process.argv[2]);
  if (other)
    builds.push(built(`${path.basename(other)} (${commit(other)})`, path.join(other, 'build-bench', 'src')));
  const database = await benchDatabase('genway_bench_writer', { cpu: 0 });
  const url = database.url;
  const writers: Writer[] = [];
  const stores: Store[] = [];
  try {
    for (const b of builds) {
      const store = new b.Store(url, QUIET_LOGGER, { requestDays: 30, bodyDays: 3, auditDays: 400 });
      await store.ping();
      await store.maintain(Date.now());
      stores.push(store);
      const options = { bufferRows: 100_000, batchRows: BATCH, flushMs: 500, oldestKept: () => 0 };
      writers.push(new b.Writer(store, undefined, options, b.createMetrics(), QUIET_LOGGER));
    }
    let at = 0;
    // Warm-up, unmeasured: every path compiled.
    for (const w of [undefined, ...writers]) {
      await loop(w, at);
      at += ROWS;
    }
    const perRow = builds.map(() => [] as number[]);
    const bare: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const base = await loop(undefined, at);
      at += ROWS;
      bare.push(base);
      for (const [i, w] of writers.entries()) {
        perRow[i].push((await loop(w, at)) - base);
        at += ROWS;
      }
      process.stderr.write(
        `round ${round + 1}: calls alone ${base.toFixed(2)} µs; ${builds.map((b, i) => `${b.name} +${perRow[i][round].toFixed(2)}`).join(', ')}\n`,
      );
    }
    const rows = builds.map(
      (b, i) =>
        `| ${b.name} | ${median(perRow[i]).toFixed(2)} (${perRow[i].map((v) => v.toFixed(2)).join(' / ')}) |`,
    );
    writeSection(
      'Request logs: the writer’s CPU per row (bench:logs:writer)',
      [
        `${ROUNDS} rounds of ${ROWS.toLocaleString('en')} simulated calls per variant, in turns; this process on CPU 1, a PostgreSQL of the run on CPU 0; ${at.toLocaleString('en')} calls in all. The calls alone cost ${median(bare).toFixed(2)} µs each (their garbage). ${machine}`,
        '',
        '| writer | CPU µs per row over the calls alone, median (per round) |',
        '| - | - |',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(writers.map((w) => w.close()));
    await Promise.all(stores.map((s) => s.close()));
    await database.drop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
