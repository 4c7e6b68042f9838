import { MockVendor } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { fundedKey } from '../helpers/services';
import { dropPrefix, describeRedis, uniquePrefix } from '../helpers/redis';
import { eventually } from '../helpers/eventually';
import {
  createTestDatabase,
  databaseUrl,
  describePostgres,
  ownPostgres,
  sql,
  type OwnPostgres,
  type TestDatabase,
} from '../helpers/postgres';
import { PostgresLogStore, requestsQuery } from '../../src/logs/postgres/store';
import type { RequestLogFilter } from '../../src/logs/types';
import { createLogger } from '../../src/observability/logger';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';

/** PostgreSQL as the durable store: migrations, partitions and retention, indexes, replicas, an outage. */

const PRICES = { 'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 } };
const quiet = createLogger({ log: { level: 'silent' } });
const DAY = 86_400_000;

const row = (time: number, accountId: string, i = 0) => ({
  time,
  requestId: `req-${i}`,
  accountId,
  keyId: 'key_1',
  surface: 'gateway' as const,
  method: 'POST',
  route: '/v1/messages',
  model: 'claude-test',
  upstream: 'anthropic',
  upstreamModel: 'claude-test',
  status: 200,
  errorType: null,
  inputTokens: 12,
  outputTokens: 3,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  costMicros: 18_000,
  latencyMs: 12.5,
  ttfbMs: 4.25,
  userAgent: 'ua',
  clientIp: '127.0.0.1',
  taskId: null,
  batchId: null,
  requestBytes: null,
  responseBytes: null,
});

describePostgres('the PostgreSQL log store', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase('pgstore');
  });
  afterEach(async () => {
    await db.drop();
  });

  test('two replicas starting at once migrate once, and both write and read', async () => {
    const a = new PostgresLogStore(db.url, quiet);
    const b = new PostgresLogStore(db.url, quiet);
    try {
      await Promise.all([a.ping(), b.ping()]);
      const now = Date.now();
      await Promise.all([
        a.insertRequests('00000000-0000-4000-8000-000000000001', [row(now, 'acct_a', 1)], []),
        b.insertRequests('00000000-0000-4000-8000-000000000002', [row(now + 1, 'acct_a', 2)], []),
      ]);
      const versions = await sql<{ version: number; n: string }>(
        db.url,
        'SELECT version, count(*) AS n FROM genway_schema_migrations GROUP BY version',
      );
      expect(versions.sort((x, y) => x.version - y.version)).toEqual([
        { version: 1, n: '1' },
        { version: 2, n: '1' },
      ]);
      const fromA = await a.requests({ accountId: 'acct_a' }, 10);
      expect(fromA.rows.map((r) => r.requestId)).toEqual(['req-2', 'req-1']);
      expect(fromA.rows[0]).toMatchObject({
        costMicros: 18_000,
        latencyMs: 12.5,
        ttfbMs: 4.25,
        time: now + 1,
      });
      // The same batch again (a replay after a lost reply) adds nothing.
      await a.insertRequests('00000000-0000-4000-8000-000000000001', [row(now, 'acct_a', 1)], []);
      expect((await b.requests({ accountId: 'acct_a' }, 10)).rows).toHaveLength(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a value a column cannot hold costs that value, not the batch: a NUL dropped, a count past int4 null, a NaN latency 0', async () => {
    const store = new PostgresLogStore(db.url, quiet);
    try {
      const now = Date.now();
      const r = {
        ...row(now, 'acct_n', 1),
        model: 'gpt\u0000x',
        userAgent: 'agent \\u0000 \\\u0000!',
      };
      const odd = {
        ...row(now + 1, 'acct_n', 2),
        userAgent: 'ü ✓ \ud800',
        inputTokens: 2 ** 40,
        outputTokens: 1.5,
        costMicros: 2 ** 60,
        latencyMs: NaN,
        ttfbMs: Infinity,
        requestBytes: 2 ** 40,
      };
      await store.insertRequests('00000000-0000-4000-8000-000000000005', [r, odd], []);
      const [second, first] = (await store.requests({ accountId: 'acct_n' }, 2)).rows;
      expect([first.model, first.userAgent]).toEqual(['gptx', 'agent \\u0000 \\!']);
      expect(second).toMatchObject({
        userAgent: 'ü ✓ \ufffd',
        inputTokens: null,
        outputTokens: null,
        costMicros: 0,
        latencyMs: 0,
        ttfbMs: null,
        requestBytes: 2 ** 40,
        time: now + 1,
      });
    } finally {
      await store.close();
    }
  });

  test("kept bodies go in the rows' own statement as they are, whatever quotes they hold; a batch id that is not a UUID is refused", async () => {
    const store = new PostgresLogStore(db.url, quiet);
    try {
      const now = Date.now();
      // The bodies travel dollar-quoted: text holding the tags, quotes and backslashes reads back unchanged.
      const requestBody = `{"q":"$b$ $b1$ ' '' \\ \\' $$"}`;
      const responseBody = 'ü ✓ $b2$ end';
      const r = row(now, 'acct_q', 1);
      await store.insertRequests(
        '00000000-0000-4000-8000-00000000000c',
        [r],
        [{ time: now, requestId: r.requestId, accountId: 'acct_q', requestBody, responseBody }],
      );
      const [listed] = (await store.requests({ accountId: 'acct_q' }, 1)).rows;
      const got = await store.request(listed.logId);
      expect(got?.bodies).toMatchObject({ requestBody, responseBody });
      // Not a UUID: refused as data (SQLSTATE 22P02), which the writer drops rather than retries; nothing went in.
      await expect(
        store.insertRequests("x'); DROP TABLE log_batches; --", [row(now, 'acct_q', 2)], []),
      ).rejects.toMatchObject({
        code: '22P02',
      });
      expect((await store.requests({ accountId: 'acct_q' }, 10)).rows).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  test('tables are partitioned by day; retention drops whole partitions; old rows get their day on demand', async () => {
    const store = new PostgresLogStore(db.url, quiet, { requestDays: 3, bodyDays: 1, auditDays: 10 });
    try {
      const now = Date.now();
      // A row from 2 days ago (its partition is not made ahead) and one from 5 days ago.
      await store.insertRequests(
        '00000000-0000-4000-8000-000000000003',
        [row(now - 2 * DAY, 'acct_p', 1), row(now - 5 * DAY, 'acct_p', 2)],
        [],
      );
      const parts = async () =>
        (
          await sql<{ name: string }>(
            db.url,
            `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
             JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'request_logs' ORDER BY 1`,
          )
        ).map((r) => r.name);
      const stamp = (t: number) =>
        `request_logs_p${new Date(t).toISOString().slice(0, 10).replace(/-/g, '')}`;
      expect(await parts()).toEqual(
        expect.arrayContaining([
          stamp(now - 5 * DAY),
          stamp(now - 2 * DAY),
          stamp(now - DAY),
          stamp(now),
          stamp(now + DAY),
          stamp(now + 2 * DAY),
        ]),
      );
      await store.maintain(now);
      const after = await parts();
      expect(after).not.toContain(stamp(now - 5 * DAY));
      expect(after).toContain(stamp(now - 2 * DAY));
      expect((await store.requests({ accountId: 'acct_p' }, 10)).rows.map((r) => r.requestId)).toEqual([
        'req-1',
      ]);
    } finally {
      await store.close();
    }
  });

  test("the console's default query and each filter are served by an index", async () => {
    const store = new PostgresLogStore(db.url, quiet);
    try {
      const now = Date.now();
      const rows = Array.from({ length: 2000 }, (_, i) => row(now - i * 10, `acct_${i % 50}`, i));
      await store.insertRequests('00000000-0000-4000-8000-000000000004', rows, []);
      await sql(db.url, 'ANALYZE request_logs');
      // The store's own page query, planned with its values: what the console and the API run.
      const plan = async (filter: RequestLogFilter) => {
        const { text, values } = requestsQuery(filter, 50);
        return (await sql<{ 'QUERY PLAN': string }>(db.url, `EXPLAIN ${text}`, values))
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      };
      // Sequential scans are off so the planner shows the index it would use on a table of millions of rows.
      await sql(db.url, 'ALTER DATABASE ' + db.name + ' SET enable_seqscan = off');
      expect(await plan({ accountId: 'acct_1' })).toMatch(/request_logs_p\d+_account_id_time_id_idx/);
      expect(await plan({ keyId: 'key_1' })).toMatch(/request_logs_p\d+_key_id_time_id_idx/);
      expect(await plan({ accountId: 'acct_1', model: 'claude-test' })).toMatch(
        /account_id_model_time_id_idx/,
      );
      // A status other than 200 reads the index of the calls that did not answer 200 (migration 002); a filter that
      // takes 200 in reads the account's. (The planner proves `status <> 200` from the values themselves, which the
      // pg client's unnamed statements plan with; the store also says it, for a plan made without them.)
      const notOk = (
        await sql<{ indexname: string }>(
          db.url,
          `SELECT indexname FROM pg_indexes WHERE tablename LIKE 'request_logs_p%' AND indexdef LIKE '%WHERE (status <> 200)'`,
        )
      ).map((r) => r.indexname);
      expect(notOk.length).toBeGreaterThan(0);
      const usesNotOk = (p: string) => notOk.some((name) => p.includes(name));
      expect(usesNotOk(await plan({ accountId: 'acct_1', status: [500, 500] }))).toBe(true);
      expect(usesNotOk(await plan({ accountId: 'acct_1', status: [400, 599] }))).toBe(true);
      const ok = await plan({ accountId: 'acct_1', status: [200, 200] });
      expect(usesNotOk(ok)).toBe(false);
      expect(ok).toMatch(/request_logs_p\d+_account_id_time_id_idx/);
      expect(await plan({})).toMatch(/request_logs_p\d+_time_id_idx/);
    } finally {
      await store.close();
    }
  });
});

describePostgres('a PostgreSQL outage under load', () => {
  let pg: OwnPostgres;
  let vendor: MockVendor;
  let gw: RunningGateway;
  let spillDir: string;
  let url: string;

  beforeAll(async () => {
    pg = await ownPostgres();
    await sql(pg.url, 'CREATE DATABASE genway');
    url = databaseUrl(pg.url, 'genway');
    vendor = await new MockVendor().start();
    spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-spill-'));
    gw = await startGateway(vendor.url, {
      gateway: { prices: PRICES },
      overlay: { logs: { databaseUrl: url, flushMs: 50, spillDir } },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    await pg?.destroy();
    fs.rmSync(spillDir, { recursive: true, force: true });
  });

  test('calls never fail while the database is down; every row is spilled, then replayed once it is back', async () => {
    const { key, accountId } = await fundedKey(gw.h.services, 100, {
      rateLimit: { ratePerSec: 10_000, burst: 10_000 },
    });
    const send = async () => {
      const res = await fetch(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
      });
      await res.text();
      return res.status;
    };
    const statuses: number[] = [];
    const load = async (n: number) => {
      for (let i = 0; i < n; i++) statuses.push(...(await Promise.all([send(), send(), send(), send()])));
    };
    await load(10); // 40 calls with the database up
    await pg.stop('immediate');
    await load(50); // 200 calls while it is down
    await gw.h.services.logs.flush();
    const metrics = await gw.h.services.metrics.registry.getSingleMetricAsString(
      'genway_logs_rows_spilled_total',
    );
    expect(metrics).toMatch(/genway_logs_rows_spilled_total\{table="requests"\} [1-9]\d*/);
    await pg.start();
    await load(10); // 40 more once it is back
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    await eventually(async () => {
      await gw.h.services.logs.flush();
      const [{ n, cost }] = await sql<{ n: string; cost: string }>(
        url,
        'SELECT count(*) AS n, sum(cost_micros) AS cost FROM request_logs WHERE account_id = $1',
        [accountId],
      );
      expect([Number(n), Number(cost)]).toEqual([280, 280 * 18_000]);
    }, 30_000);
    // Replayed once: no request id twice.
    const [{ dupes }] = await sql<{ dupes: string }>(
      url,
      'SELECT count(*) - count(DISTINCT request_id) AS dupes FROM request_logs WHERE account_id = $1',
      [accountId],
    );
    expect(Number(dupes)).toBe(0);
    const dropped = await gw.h.services.metrics.registry.getSingleMetricAsString(
      'genway_logs_rows_dropped_total',
    );
    expect(dropped).not.toMatch(/table="requests".*\} [1-9]/);
    expect(fs.readdirSync(path.join(spillDir, gw.h.services.config.store.prefix))).toEqual([]);
  }, 120_000);
});

describeRedis('two replicas on one Redis and one PostgreSQL', () => {
  describePostgres('', () => {
    let vendor: MockVendor;
    let a: RunningGateway;
    let b: RunningGateway;
    let db: TestDatabase;
    const prefix = uniquePrefix('logs-replicas');
    beforeAll(async () => {
      vendor = await new MockVendor().start();
      db = await createTestDatabase('replicas');
      const options = {
        redis: true,
        prefix,
        gateway: { prices: PRICES },
        overlay: { logs: { databaseUrl: db.url, flushMs: 50 } },
      };
      [a, b] = await Promise.all([startGateway(vendor.url, options), startGateway(vendor.url, options)]);
    }, 60_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await vendor?.stop();
      await dropPrefix(prefix);
      await db?.drop();
    });

    test('every replica writes and any replica answers for all of them', async () => {
      const { key, accountId } = await fundedKey(a.h.services, 10);
      for (const gw of [a, b, b]) {
        const res = await fetch(`${gw.base}/v1/messages`, {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'content-type': 'application/json',
            'anthropic-version': '2023-06-01',
          },
          body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
        });
        expect(res.status).toBe(200);
        await res.text();
      }
      await a.h.services.logs.flush();
      await b.h.services.logs.flush();
      for (const gw of [a, b]) {
        const res = await fetch(`${gw.base}/api/v1/logs`, { headers: { authorization: `Bearer ${key}` } });
        const items = ((await res.json()) as { data: { items: { accountId: string }[] } }).data.items;
        expect(items.map((r) => r.accountId)).toEqual([accountId, accountId, accountId]);
      }
      const versions = await sql(db.url, 'SELECT version FROM genway_schema_migrations ORDER BY version');
      expect(versions).toEqual([{ version: 1 }, { version: 2 }]);
    });
  });
});
