/**
 * npm run bench:logs:db — the database's own CPU per request row Genway writes: its COPY in the binary format
 * (PostgresLogStore.insertCopy, now) against the multi-row insert from one jsonb array it replaced (the statement as
 * it was at ad78b3e, kept here). A PostgreSQL of the run's own pinned to CPU 0, one database per variant, the schema
 * as the migrations leave it; each batch (2,000 rows of 1,000 accounts, 5,000 keys, 10 models, 1 % answered 500, as
 * bench:logs writes them, request ids of version 7) goes in through each variant in turns, and the server's CPU over
 * each insert (its live processes: the backend, the WAL writer, the checkpointer) is counted to that variant. The first
 * BENCH_WARM_BATCHES of each are not counted. Bounded: variants x BENCH_DB_BATCHES batches.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { BUILT_SRC, gatewayRow, machineNote, QUIET_LOGGER, writeSection } from './lib';
import { ownServer } from './pg-server';
import { pin } from './proxies';
import path from 'node:path';
import type { PostgresLogStore as Store } from '../src/logs/postgres/store';
import type { CopyRows as Copy } from '../src/logs/copy-rows';
import type { uuidV7 as UuidV7 } from '../src/ids';
import type { RequestLogRow } from '../src/logs/types';

const BATCHES = Number(process.env.BENCH_DB_BATCHES ?? 150);
const WARM = Number(process.env.BENCH_WARM_BATCHES ?? 10);
const ROWS = 2000;

/* eslint-disable @typescript-eslint/no-require-imports -- the build's modules, as bench:logs:writer loads them */
const { PostgresLogStore } = require(path.join(BUILT_SRC, 'logs', 'postgres', 'store.js')) as {
  PostgresLogStore: typeof Store;
};
const { CopyRows } = require(path.join(BUILT_SRC, 'logs', 'copy-rows.js')) as { CopyRows: typeof Copy };
const { uuidV7 } = require(path.join(BUILT_SRC, 'ids.js')) as { uuidV7: typeof UuidV7 };
/* eslint-enable @typescript-eslint/no-require-imports */

/** The insert Genway ran before COPY: the batch as one JSON array of value arrays, unpacked by the server. */
const JSONB_INSERT = `WITH batch AS (INSERT INTO log_batches (id) VALUES ($1))
INSERT INTO request_logs (time, request_id, account_id, key_id, surface, method, route, model, upstream,
  upstream_model, status, error_type, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
  reasoning_tokens, cost_micros, latency_ms, ttfb_ms, user_agent, client_ip, task_id, batch_id, request_bytes,
  response_bytes)
SELECT to_timestamp((e->>0)::float8 / 1000.0), (e->>1), (e->>2), (e->>3), (e->>4), (e->>5), (e->>6), (e->>7), (e->>8), (e->>9), (e->>10)::int2, (e->>11), (e->>12)::int4, (e->>13)::int4, (e->>14)::int4, (e->>15)::int4, (e->>16)::int4, (e->>17)::int8, (e->>18)::float4, (e->>19)::float4, (e->>20), (e->>21), (e->>22), (e->>23), (e->>24)::int8, (e->>25)::int8
FROM jsonb_array_elements($2::jsonb) AS e`;

const values = (r: RequestLogRow) => [
  r.time,
  r.requestId,
  r.accountId,
  r.keyId,
  r.surface,
  r.method,
  r.route,
  r.model,
  r.upstream,
  r.upstreamModel,
  r.status,
  r.errorType,
  r.inputTokens,
  r.outputTokens,
  r.cachedTokens,
  r.cacheWriteTokens,
  r.reasoningTokens,
  r.costMicros,
  r.latencyMs,
  r.ttfbMs,
  r.userAgent,
  r.clientIp,
  r.taskId,
  r.batchId,
  r.requestBytes,
  r.responseBytes,
];

interface Variant {
  name: string;
  insert(store: Store, client: Client, rows: RequestLogRow[]): () => Promise<unknown>;
}

const VARIANTS: Variant[] = [
  {
    name: 'now: COPY, binary format',
    insert: (store, _client, rows) => {
      const copy = CopyRows.ofRows(rows);
      return () => store.insertCopy(randomUUID(), copy, []);
    },
  },
  {
    name: 'before: multi-row insert from one jsonb array',
    insert: (_store, client, rows) => {
      const json = JSON.stringify(rows.map(values));
      return () => client.query(JSONB_INSERT, [randomUUID(), json]);
    },
  },
];

let n = 0;
function rowOf(): RequestLogRow {
  const i = n++;
  const failed = i % 100 === 0;
  return gatewayRow({
    time: Date.now(),
    requestId: uuidV7(),
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
  const clients: Client[] = [];
  try {
    await admin.connect();
    for (let i = 0; i < VARIANTS.length; i++) {
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
      const client = new Client({ connectionString: url.toString() });
      await client.connect();
      clients.push(client);
    }
    const cpu = VARIANTS.map(() => 0);
    for (let b = 0; b < WARM + BATCHES; b++) {
      for (const [i, v] of VARIANTS.entries()) {
        const insert = v.insert(stores[i], clients[i], Array.from({ length: ROWS }, rowOf));
        const before = server.cpuSeconds();
        await insert();
        if (b >= WARM) cpu[i] += server.cpuSeconds() - before;
      }
      if ((b + 1) % 50 === 0) process.stderr.write(`${b + 1} batches per variant\n`);
    }
    const perRow = cpu.map((c) => (c * 1e6) / (BATCHES * ROWS));
    const base = perRow[VARIANTS.length - 1];
    writeSection(
      'Request logs: the database’s CPU per row (bench:logs:db)',
      [
        `${BATCHES} batches of ${ROWS.toLocaleString('en')} rows per variant after ${WARM} uncounted, in turns, through each variant into a PostgreSQL of the run's own pinned to CPU 0 (one database per variant, ${((WARM + BATCHES) * ROWS).toLocaleString('en')} rows each); the server's CPU over each insert. ${machine}`,
        '',
        '| how the rows go in | server CPU µs per row | against before |',
        '| - | - | - |',
        ...VARIANTS.map(
          (v, i) => `| ${v.name} | ${perRow[i].toFixed(1)} | ${(perRow[i] / base).toFixed(2)}x |`,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await Promise.all(clients.map((c) => c.end()));
    await admin.end().catch(() => undefined);
    server.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
