/**
 * npm run bench:logs:db — the database's own CPU per request row Genway writes: the schema as the migrations leave it,
 * against the same schema as it was before migration 002 (an `(account_id, status, time, id)` index in place of the
 * partial one), each with request ids of version 7 (what Genway makes) and of version 4 (random, what it made
 * before, and what a client's own ids may be). A PostgreSQL of the run's own pinned to CPU 0, one database per
 * variant; each batch (2,000 rows of 1,000 accounts, 5,000 keys, 10 models, 1 % answered 500, as bench:logs writes
 * them) goes through PostgresLogStore.insertLines, the variants in turns, and the server's CPU over each insert
 * (its live processes: the backend, the WAL writer, the checkpointer) is counted to that variant. The first
 * BENCH_WARM_BATCHES of each are not counted. Bounded: variants x BENCH_DB_BATCHES batches.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { BUILT_SRC, gatewayRow, machineNote, QUIET_LOGGER, writeSection } from './lib';
import { ownServer } from './pg-server';
import { pin } from './proxies';
import path from 'node:path';
import type { PostgresLogStore as Store } from '../src/logs/postgres/store';
import type { RowLines as Lines } from '../src/logs/row-line';
import type { uuidV7 as UuidV7 } from '../src/ids';
import type { RequestLogRow } from '../src/logs/types';

const BATCHES = Number(process.env.BENCH_DB_BATCHES ?? 150);
const WARM = Number(process.env.BENCH_WARM_BATCHES ?? 10);
const ROWS = 2000;

/* eslint-disable @typescript-eslint/no-require-imports -- the build's modules, as bench:logs:writer loads them */
const { PostgresLogStore } = require(path.join(BUILT_SRC, 'logs', 'postgres', 'store.js')) as {
  PostgresLogStore: typeof Store;
};
const { RowLines } = require(path.join(BUILT_SRC, 'logs', 'row-line.js')) as { RowLines: typeof Lines };
const { uuidV7 } = require(path.join(BUILT_SRC, 'ids.js')) as { uuidV7: typeof UuidV7 };
/* eslint-enable @typescript-eslint/no-require-imports */

interface Variant {
  name: string;
  ids: () => string;
  /** The index of every status, as before migration 002. */
  statusIndex: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'now: version 7 ids, the partial status index', ids: () => uuidV7(), statusIndex: false },
  { name: 'version 4 ids, the partial status index', ids: randomUUID, statusIndex: false },
  { name: 'version 7 ids, the index of every status', ids: () => uuidV7(), statusIndex: true },
  { name: 'before: version 4 ids, the index of every status', ids: randomUUID, statusIndex: true },
];

let n = 0;
function rowOf(requestId: string): RequestLogRow {
  const i = n++;
  const failed = i % 100 === 0;
  return gatewayRow({
    time: Date.now(),
    requestId,
    accountId: `acct_${String((i * 7919) % 1000).padStart(20, '0')}`,
    keyId: `key_${String((i * 104729) % 5000).padStart(24, '0')}`,
    model: `claude-bench-${i % 10}`,
    status: failed ? 500 : 200,
    errorType: failed ? 'upstream_500' : null,
    inputTokens: 12 + (i % 50),
    clientIp: '10.0.0.7',
  });
}

async function main(): Promise<void> {
  const machine = machineNote();
  pin(process.pid, 1);
  const server = ownServer(0);
  const admin = new Client({ connectionString: server.url });
  const stores: Store[] = [];
  try {
    await admin.connect();
    for (const [i, v] of VARIANTS.entries()) {
      const name = `genway_bench_db_${i}`;
      await admin.query(`CREATE DATABASE ${name}`);
      const url = new URL(server.url);
      url.pathname = `/${name}`;
      const store = new PostgresLogStore(url.toString(), QUIET_LOGGER, {
        requestDays: 30,
        bodyDays: 3,
        auditDays: 400,
      });
      await store.ping();
      await store.maintain(Date.now());
      stores.push(store);
      if (v.statusIndex) {
        const c = new Client({ connectionString: url.toString() });
        await c.connect();
        await c.query('DROP INDEX request_logs_account_not_ok');
        await c.query(
          'CREATE INDEX request_logs_account_status ON request_logs (account_id, status, time DESC, id DESC)',
        );
        await c.end();
      }
    }
    const cpu = VARIANTS.map(() => 0);
    const lines = new RowLines(ROWS * 512);
    for (let b = 0; b < WARM + BATCHES; b++) {
      for (const [i, v] of VARIANTS.entries()) {
        lines.reset();
        for (let r = 0; r < ROWS; r++) lines.pushRow(rowOf(v.ids()));
        const before = server.cpuSeconds();
        await stores[i].insertLines(randomUUID(), lines, []);
        if (b >= WARM) cpu[i] += server.cpuSeconds() - before;
      }
      if ((b + 1) % 50 === 0) process.stderr.write(`${b + 1} batches per variant\n`);
    }
    const perRow = cpu.map((c) => (c * 1e6) / (BATCHES * ROWS));
    const base = perRow[VARIANTS.length - 1];
    writeSection(
      'Request logs: the database’s CPU per row (bench:logs:db)',
      [
        `${BATCHES} batches of ${ROWS.toLocaleString('en')} rows per variant after ${WARM} uncounted, in turns, through PostgresLogStore.insertLines into a PostgreSQL of the run's own pinned to CPU 0 (one database per variant, ${((WARM + BATCHES) * ROWS).toLocaleString('en')} rows each); the server's CPU over each insert. ${machine}`,
        '',
        '| schema and request ids | server CPU µs per row | against before |',
        '| - | - | - |',
        ...VARIANTS.map(
          (v, i) => `| ${v.name} | ${perRow[i].toFixed(1)} | ${(perRow[i] / base).toFixed(2)}x |`,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await admin.end().catch(() => undefined);
    server.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
