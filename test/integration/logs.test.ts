import http from 'node:http';
import { MESSAGES_STREAM, MockVendor, sse } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { ADMIN_TOKEN, fundedKey } from '../helpers/services';
import { dropPrefix, redisUrl, uniquePrefix } from '../helpers/redis';
import { createTestDatabase, postgresAvailable, sql, type TestDatabase } from '../helpers/postgres';
import { eventually } from '../helpers/eventually';
import { runAdminCli } from '../../src/admin/cli';

/** Runs `check` until it passes (10 s at most) and returns what it returned. */
async function until<T>(check: () => Promise<T>): Promise<T> {
  let value: T | undefined;
  await eventually(async () => {
    value = await check();
  });
  return value as T;
}

/**
 * Request logs and the audit trail through real HTTP, in each store: the embedded ring, PostgreSQL in embedded mode,
 * and PostgreSQL in Redis mode. Happy paths with exact rows, bad input, another account's rows, secrets.
 */

/** One messages call (12 in, 3 out) costs 18,000 micro-USD; basic-image at its default resolution 30,000. */
const PRICES = { 'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 } };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const modes: [string, boolean, boolean][] = [
  ['embedded, ring', false, false],
  ...(postgresAvailable ? [['embedded, postgres', false, true] as [string, boolean, boolean]] : []),
  ...(postgresAvailable && redisUrl ? [['redis, postgres', true, true] as [string, boolean, boolean]] : []),
];

describe.each(modes)('request logs and audit (%s)', (_mode, redis, postgres) => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let prefix: string;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    vendor = await new MockVendor().start();
    prefix = uniquePrefix('logs');
    db = postgres ? await createTestDatabase('logs') : undefined;
    gw = await startGateway(vendor.url, {
      redis,
      prefix,
      workers: true,
      gateway: { prices: PRICES },
      overlay: {
        sandbox: { delayMs: 20 },
        logs: { ...(db ? { databaseUrl: db.url } : {}), flushMs: 50 },
      },
    });
  }, 30_000);
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    if (redis) await dropPrefix(prefix);
    await db?.drop();
  });

  const call = async (secret: string, method: string, path: string, body?: unknown, headers = {}) => {
    const res = await fetch(`${gw.base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: Json = {};
    try {
      json = JSON.parse(text) as Json;
    } catch {
      // CSV, JSON lines
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  const messages = (key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'user-agent': 'logs-test/1.0',
        ...headers,
      },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [], ...extra }),
    });
  const logsOf = async (secret: string, query = '') => {
    const res = await call(secret, 'GET', `/api/v1/logs${query}`);
    expect(res.status).toBe(200);
    return res.json.data.items as Json[];
  };

  test('a gateway call is one row: who, what, the answer, its tokens and cost, its timing and client', async () => {
    const { key, keyId, accountId } = await fundedKey(gw.h.services, 10);
    const res = await messages(key);
    expect(res.status).toBe(200);
    await res.text();
    const requestId = res.headers.get('genway-request-id');
    const items = await until(async () => {
      const got = await logsOf(key);
      expect(got).toHaveLength(1);
      return got;
    });
    const row = items[0];
    expect(row).toMatchObject({
      requestId,
      accountId,
      keyId,
      surface: 'gateway',
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
      reasoningTokens: 0,
      costUsd: 0.018,
      userAgent: 'logs-test/1.0',
      clientIp: '127.0.0.1',
      taskId: null,
    });
    expect(row.latencyMs).toBeGreaterThan(0);
    expect(row.ttfbMs).toBeGreaterThan(0);
    expect(row.ttfbMs).toBeLessThanOrEqual(row.latencyMs);
    expect(Date.parse(row.time)).toBeGreaterThan(Date.now() - 60_000);
    // Its detail by id; no bodies are kept by default.
    const detail = await call(key, 'GET', `/api/v1/logs/${row.logId}`);
    expect(detail.status).toBe(200);
    expect(detail.json.data).toMatchObject({ requestId, costUsd: 0.018, bodies: null, requestBytes: null });
  });

  test('a stream its client left once the answer was out: one row, written after the usage that followed', async () => {
    const { key } = await fundedKey(gw.h.services, 10);
    const stream = sse(MESSAGES_STREAM);
    const at = stream.indexOf('event: message_delta');
    vendor.next((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(stream.slice(0, at));
      setTimeout(() => res.end(stream.slice(at)), 300);
    });
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      });
      let seen = '';
      req.on('response', (res) =>
        res.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('content_block_stop')) {
            req.destroy();
            resolve();
          }
        }),
      );
      req.on('error', () => undefined);
      req.end('{"model":"claude-test","stream":true}');
      setTimeout(() => reject(new Error('never saw content_block_stop')), 5000).unref();
    });
    // The response closed at once; its row waits for message_delta's output count (300 ms later).
    const [row] = await until(async () => {
      const got = await logsOf(key);
      expect(got).toHaveLength(1);
      return got;
    });
    // 25 in and 5 cache reads at 1,000, 7 out at 2,000 micro-USD per token. The client's address too, though its
    // connection closed before the row was made.
    expect(row).toMatchObject({
      status: 200,
      errorType: 'response_cut',
      inputTokens: 25,
      cachedTokens: 5,
      outputTokens: 7,
      costUsd: 0.044,
      clientIp: '127.0.0.1',
    });
  });

  test("refusals are rows too: a key's 403 is its account's, an unknown key's 401 only the admin's", async () => {
    const { key, accountId } = await fundedKey(gw.h.services, 10, { models: ['other-model'] });
    const refused = await messages(key);
    expect(refused.status).toBe(403);
    const unknown = await messages('gwk_' + 'x'.repeat(43), {}, { 'x-request-id': `unknown-${accountId}` });
    expect(unknown.status).toBe(401);
    const own = await until(async () => {
      const got = await logsOf(key);
      expect(got).toHaveLength(1);
      return got;
    });
    expect(own[0]).toMatchObject({
      status: 403,
      errorType: 'forbidden',
      accountId,
      costUsd: 0,
      inputTokens: null,
    });
    const admin = await call(ADMIN_TOKEN, 'GET', `/admin/v1/logs?requestId=unknown-${accountId}`);
    expect(admin.json.data.items).toHaveLength(1);
    expect(admin.json.data.items[0]).toMatchObject({
      status: 401,
      errorType: 'unauthorized',
      accountId: null,
      keyId: null,
    });
  });

  test('task submissions: one row each, batch items one each, at the task charge; a refused one too', async () => {
    const { key, keyId } = await fundedKey(gw.h.services, 10);
    const single = await call(key, 'POST', '/api/v1/generateTask/basic-image', {
      input: { prompt: 'a fox' },
    });
    expect(single.status).toBe(200);
    const bad = await call(key, 'POST', '/api/v1/generateTask/basic-image', { input: { prompt: '' } });
    expect(bad.status).toBe(400);
    const batch = await call(
      key,
      'POST',
      '/api/v1/generateTask/basic-image/batches',
      {
        items: [
          { client_item_id: 'a', idempotency_key: 'a', input: { prompt: 'one' } },
          { client_item_id: 'b', idempotency_key: 'b', input: { prompt: '' } },
        ],
      },
      { 'idempotency-key': 'batch-1' },
    );
    expect(batch.status).toBe(200);
    const items = await until(async () => {
      const got = await logsOf(key, '?surface=tasks');
      expect(got).toHaveLength(4);
      return got;
    });
    const byTask = (id: string | null) => items.filter((r) => r.taskId === id);
    expect(byTask(single.json.data.taskId)[0]).toMatchObject({
      surface: 'tasks',
      route: '/api/v1/generateTask/:model',
      model: 'basic-image',
      status: 200,
      costUsd: 0.03,
      keyId,
      batchId: null,
    });
    const accepted = batch.json.data.items[0];
    expect(byTask(accepted.taskId)[0]).toMatchObject({
      status: 200,
      costUsd: 0.03,
      batchId: batch.json.data.batchId,
    });
    const refused = byTask(null);
    expect(refused.map((r) => [r.status, r.errorType, r.costUsd, r.batchId]).sort()).toEqual(
      [
        [400, 'invalid_parameter_value', 0, batch.json.data.batchId],
        [400, 'invalid_request', 0, null],
      ].sort(),
    );
    // A task's calls are found from the task.
    const fromTask = await logsOf(key, `?taskId=${single.json.data.taskId}`);
    expect(fromTask.map((r) => r.taskId)).toEqual([single.json.data.taskId]);
  });

  test('filters, cursor paging newest first, and CSV and JSON-lines exports of exactly the matching rows', async () => {
    const { key, keyId } = await fundedKey(gw.h.services, 10);
    const second = await gw.h.services.accounts.createKey(
      (await gw.h.services.accounts.describeKey(keyId)).accountId,
      {},
    );
    for (let i = 0; i < 5; i++) expect((await messages(key)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await messages(second.key)).status).toBe(200);
    expect((await messages(key, { model: 'unpriced-model' })).status).toBe(200);
    await eventually(async () => expect(await logsOf(key, '?limit=100')).toHaveLength(8));

    expect(await logsOf(key, `?keyId=${second.keyId}`)).toHaveLength(2);
    expect((await logsOf(key, '?model=unpriced-model')).map((r) => r.costUsd)).toEqual([0]);
    expect(await logsOf(key, '?status=2xx&model=claude-test')).toHaveLength(7);
    expect(await logsOf(key, '?status=500')).toHaveLength(0);
    expect(await logsOf(key, '?upstream=anthropic&surface=gateway')).toHaveLength(8);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await logsOf(key, `?from=${encodeURIComponent(future)}`)).toHaveLength(0);
    expect(await logsOf(key, `?to=${encodeURIComponent(future)}&from=2020-01-01`)).toHaveLength(8);

    // Pages of 3: 3, 3, 2, newest first, no row twice.
    const seen: Json[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const page: { status: number; json: Json } = await call(
        key,
        'GET',
        `/api/v1/logs?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      sizes.push(page.json.data.items.length);
      seen.push(...page.json.data.items);
      cursor = page.json.data.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 2]);
    expect(new Set(seen.map((r) => r.logId)).size).toBe(8);
    const times = seen.map((r) => Date.parse(r.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const csv = await call(key, 'GET', '/api/v1/logs?format=csv&model=claude-test');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('transfer-encoding')).toBe('chunked');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0].split(',').slice(0, 4)).toEqual(['logId', 'requestId', 'time', 'accountId']);
    expect(lines).toHaveLength(1 + 7);
    const jsonl = await call(key, 'GET', `/api/v1/logs?format=jsonl&keyId=${second.keyId}`);
    expect(jsonl.headers.get('content-type')).toBe('application/x-ndjson');
    const rows = jsonl.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(rows.map((r) => [r.keyId, r.costUsd])).toEqual([
      [second.keyId, 0.018],
      [second.keyId, 0.018],
    ]);
  });

  test('bad filters, cursors and formats are 400s naming the field and the rule', async () => {
    const { key } = await fundedKey(gw.h.services, 1);
    const cases: [string, RegExp][] = [
      ['?from=yesterday', /^query\.from: must be an ISO 8601 date-time/],
      ['?status=6xx', /^query\.status: must be a status \(100 to 599\) or a class/],
      ['?limit=0', /^query\.limit: must be an integer from 1 to 1000/],
      ['?limit=1001', /^query\.limit: must be an integer from 1 to 1000/],
      ['?format=xml', /^query\.format: must be one of json, csv, jsonl/],
      ['?cursor=bm9wZQ', /^query\.cursor: not a cursor this list returned/],
      ['?from=2026-01-02&to=2026-01-01', /^query\.from: must be before query\.to/],
      ['?accountId=acct_x', /^query: unknown field\(s\) accountId/],
      ['?model=a&model=b', /^query\.model: must be given once, as a string/],
      ['?surface=batch', /^query\.surface: must be one of gateway, tasks/],
    ];
    for (const [query, message] of cases) {
      const res = await call(key, 'GET', `/api/v1/logs${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.json.message).toMatch(message);
    }
    const audit = await call(ADMIN_TOKEN, 'GET', '/admin/v1/audit?actor=');
    expect(audit.status).toBe(400);
    expect(audit.json.message).toBe('query.actor: must not be empty');
  });

  test("a key never reads another account's rows, by list, filter, export or id", async () => {
    const a = await fundedKey(gw.h.services, 10);
    const b = await fundedKey(gw.h.services, 10);
    expect((await messages(a.key)).status).toBe(200);
    const [row] = await until(async () => {
      const got = await logsOf(a.key);
      expect(got).toHaveLength(1);
      return got;
    });
    expect(await logsOf(b.key)).toEqual([]);
    expect(await logsOf(b.key, `?keyId=${a.keyId}`)).toEqual([]);
    expect(await logsOf(b.key, `?requestId=${row.requestId}`)).toEqual([]);
    const exported = await call(b.key, 'GET', `/api/v1/logs?format=jsonl&keyId=${a.keyId}`);
    expect(exported.text).toBe('');
    const byId = await call(b.key, 'GET', `/api/v1/logs/${row.logId}`);
    expect(byId.status).toBe(404);
    expect((await call(b.key, 'GET', '/admin/v1/logs')).status).toBe(401);
    expect((await call(b.key, 'GET', '/admin/v1/audit')).status).toBe(401);
    const admin = await call(ADMIN_TOKEN, 'GET', `/admin/v1/logs?accountId=${a.accountId}`);
    expect(admin.json.data.items.map((r: Json) => r.logId)).toEqual([row.logId]);
  });

  test('every control-plane change is one audit row with its actor, and no secret in any of them', async () => {
    const admin = (method: string, path: string, body?: unknown) =>
      call(ADMIN_TOKEN, method, `/admin/v1${path}`, body);
    const account = await admin('POST', '/accounts', { name: 'audited', balanceUsd: 5 });
    const accountId = account.json.data.accountId as string;
    const created = await admin('POST', `/accounts/${accountId}/keys`, {
      name: 'ci',
      models: ['claude-test'],
    });
    const { keyId, key } = created.json.data as { keyId: string; key: string };
    expect(
      (await admin('POST', `/accounts/${accountId}/credits`, { amountUsd: 2.5, reference: 'inv-1' })).status,
    ).toBe(200);
    expect((await admin('PUT', `/keys/${keyId}/budget`, { period: 'day', limitUsd: 3 })).status).toBe(200);
    expect((await admin('PATCH', `/accounts/${accountId}`, { name: 'audited-2' })).status).toBe(200);
    const rotated = await admin('POST', `/keys/${keyId}/rotate`, { graceSeconds: 60 });
    const newKey = rotated.json.data as { keyId: string; key: string };
    // The account's own key acts too: its own webhook secret, a key of its own.
    const owner = await admin('POST', `/accounts/${accountId}/keys`, { name: 'owner' });
    const ownerKey = owner.json.data as { keyId: string; key: string };
    const secret = await call(ownerKey.key, 'GET', '/api/v1/webhooks/secret');
    const rotatedSecret = await call(ownerKey.key, 'POST', '/api/v1/webhooks/secret/rotate');
    expect(rotatedSecret.json.data.version).toBe(secret.json.data.version + 1);
    const selfMade = await call(ownerKey.key, 'POST', '/api/v1/keys', { name: 'self' });
    expect((await call(ownerKey.key, 'DELETE', `/api/v1/keys/${selfMade.json.data.keyId}`)).status).toBe(200);
    expect((await admin('DELETE', `/keys/${newKey.keyId}`)).status).toBe(200);

    const rows = await until(async () => {
      const got = await admin('GET', `/audit?accountId=${accountId}&limit=100`);
      expect(got.json.data.items).toHaveLength(13);
      return (got.json.data.items as Json[]).reverse();
    });
    expect(rows.map((r) => [r.actor, r.action, r.target])).toEqual([
      ['admin', 'account.create', `account:${accountId}`],
      ['admin', 'key.create', `key:${keyId}`],
      ['admin', 'credit.add', `account:${accountId}`],
      ['admin', 'budget.set', `budget:key:${keyId}`],
      ['admin', 'account.update', `account:${accountId}`],
      ['admin', 'key.rotate', `key:${keyId}`],
      ['admin', 'key.expire', `key:${keyId}`],
      ['admin', 'key.create', `key:${newKey.keyId}`],
      ['admin', 'key.create', `key:${ownerKey.keyId}`],
      [ownerKey.keyId, 'webhook_secret.rotate', `webhook_secret:${accountId}`],
      [ownerKey.keyId, 'key.create', `key:${selfMade.json.data.keyId}`],
      [ownerKey.keyId, 'key.revoke', `key:${selfMade.json.data.keyId}`],
      ['admin', 'key.revoke', `key:${newKey.keyId}`],
    ]);
    expect(rows[0].after).toEqual({ name: 'audited', balanceUsd: 5, webhookScheme: 'genway' });
    expect(rows[1].after).toMatchObject({
      keyId,
      name: 'ci',
      prefix: key.slice(0, 12),
      models: ['claude-test'],
    });
    expect(rows[2].after).toEqual({ amountUsd: 2.5, reference: 'inv-1', balanceUsd: 7.5 });
    expect(rows[3]).toMatchObject({ before: null, after: { period: 'day', limitUsd: 3 } });
    expect(rows[4]).toMatchObject({ before: { name: 'audited' }, after: { name: 'audited-2' } });
    expect(rows[5].after).toMatchObject({ newKeyId: newKey.keyId, newPrefix: newKey.key.slice(0, 12) });
    expect(rows[9]).toMatchObject({
      before: { version: secret.json.data.version },
      after: { version: secret.json.data.version + 1 },
    });
    expect(rows[12].before).toMatchObject({ status: 'active', prefix: newKey.key.slice(0, 12) });
    // No secret anywhere: the keys, the webhook secrets and the admin token, as the API returns every row.
    const secrets = [
      key,
      newKey.key,
      ownerKey.key,
      secret.json.data.secret,
      rotatedSecret.json.data.secret,
      ADMIN_TOKEN,
    ];
    const everything = JSON.stringify(await admin('GET', '/audit?limit=1000'));
    for (const secretText of secrets) expect(everything.includes(secretText)).toBe(false);
    if (db) {
      const dump =
        JSON.stringify(await sql(db.url, 'SELECT * FROM audit_log')) +
        JSON.stringify(await sql(db.url, 'SELECT * FROM request_logs'));
      for (const secretText of secrets) expect(dump.includes(secretText)).toBe(false);
      expect(dump).toContain(key.slice(0, 12));
    }
    expect(gw.h.logs.text.includes(key)).toBe(false);
  });

  test('the audit trail is append-only through every API (and in the database)', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call(ADMIN_TOKEN, method, '/admin/v1/audit', method === 'DELETE' ? undefined : {});
      expect([method, res.status]).toEqual([method, 405]);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
    const one = await call(ADMIN_TOKEN, 'GET', '/admin/v1/audit?limit=1');
    const id = one.json.data.items[0]?.auditId ?? 'x';
    expect((await call(ADMIN_TOKEN, 'DELETE', `/admin/v1/audit/${id}`)).status).toBe(404);
    if (db) {
      await expect(sql(db.url, 'UPDATE audit_log SET actor = $1', ['someone'])).rejects.toThrow(
        /append-only/,
      );
      await expect(sql(db.url, 'DELETE FROM audit_log')).rejects.toThrow(/append-only/);
      await expect(sql(db.url, 'TRUNCATE audit_log')).rejects.toThrow(/append-only/);
    }
  });

  test('with bodies off (the default) no prompt text is in any row, export or log line', async () => {
    const { key } = await fundedKey(gw.h.services, 10);
    const marker = `secret-prompt-${Math.random().toString(36).slice(2)}`;
    const res = await messages(key, { messages: [{ role: 'user', content: marker }] });
    expect(res.status).toBe(200);
    const task = await call(key, 'POST', '/api/v1/generateTask/basic-image', { input: { prompt: marker } });
    expect(task.status).toBe(200);
    await eventually(async () => expect(await logsOf(key)).toHaveLength(2));
    const exported = await call(ADMIN_TOKEN, 'GET', '/admin/v1/logs?format=jsonl');
    expect(exported.text.includes(marker)).toBe(false);
    const [row] = await logsOf(key, '?surface=gateway');
    expect(JSON.stringify((await call(key, 'GET', `/api/v1/logs/${row.logId}`)).json).includes(marker)).toBe(
      false,
    );
    if (db) {
      const dump =
        JSON.stringify(await sql(db.url, 'SELECT * FROM request_logs')) +
        JSON.stringify(await sql(db.url, 'SELECT * FROM request_log_bodies'));
      expect(dump.includes(marker)).toBe(false);
    }
    expect(gw.h.logs.text.includes(marker)).toBe(false);
  });

  test('genway admin logs and audit: the same rows from a terminal, CSV as it comes', async () => {
    const { key, accountId } = await fundedKey(gw.h.services, 10);
    expect((await messages(key)).status).toBe(200);
    await eventually(async () => expect(await logsOf(key)).toHaveLength(1));
    const cli = async (...args: string[]) => {
      let out = '';
      const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        out += String(chunk);
        return true;
      });
      try {
        const code = await runAdminCli(args, { GENWAY_URL: gw.base, GENWAY_ADMIN_TOKEN: ADMIN_TOKEN });
        return { code, out };
      } finally {
        write.mockRestore();
      }
    };
    const listed = await cli('logs', '--account', accountId, '--status', '2xx');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out).items.map((r: Json) => [r.accountId, r.costUsd])).toEqual([
      [accountId, 0.018],
    ]);
    const csv = await cli('logs', '--account', accountId, '--format', 'csv');
    expect(csv.out.trimEnd().split('\r\n')).toHaveLength(2);
    const { keyId } = (await gw.h.services.accounts.listKeys(accountId))[0];
    expect((await cli('logs', 'bodies', 'set', 'key', keyId, '--mode', 'metadata')).code).toBe(0);
    const audit = await cli('audit', '--target', `key:${keyId}`, '--action', 'logs');
    expect(JSON.parse(audit.out).items.map((r: Json) => [r.actor, r.action, r.after])).toEqual([
      ['admin', 'logs.bodies.set', { mode: 'metadata' }],
    ]);
  });

  test("an account's metadata mode records body sizes and no text; a key's own mode wins over its account's", async () => {
    const { key, keyId, accountId } = await fundedKey(gw.h.services, 10);
    const other = await gw.h.services.accounts.createKey(accountId, {});
    const put = (path: string, mode: string | null) =>
      call(ADMIN_TOKEN, 'PUT', `/admin/v1${path}/log-bodies`, { mode });
    expect((await put(`/accounts/${accountId}`, 'metadata')).status).toBe(200);
    expect((await put(`/keys/${other.keyId}`, 'off')).status).toBe(200);
    const body = JSON.stringify({
      model: 'claude-test',
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hello' }],
    });
    for (const k of [key, other.key]) {
      const res = await fetch(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': k, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body,
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    const rows = await until(async () => {
      const got = await logsOf(key);
      expect(got).toHaveLength(2);
      return got;
    });
    const mine = rows.find((r) => r.keyId === keyId)!;
    const theirs = rows.find((r) => r.keyId === other.keyId)!;
    expect(mine.requestBytes).toBe(Buffer.byteLength(body));
    expect(mine.responseBytes).toBeGreaterThan(100);
    expect([theirs.requestBytes, theirs.responseBytes]).toEqual([null, null]);
    expect((await call(key, 'GET', `/api/v1/logs/${mine.logId}`)).json.data.bodies).toBeNull();
    const settings = await call(ADMIN_TOKEN, 'GET', '/admin/v1/log-bodies');
    expect(settings.json.data.settings).toEqual(
      expect.arrayContaining([
        { scope: `account:${accountId}`, mode: 'metadata' },
        { scope: `key:${other.keyId}`, mode: 'off' },
      ]),
    );
  });

  test("a key's bodies kept in full when the admin says so: redacted, and audited", async () => {
    const { key, keyId, accountId } = await fundedKey(gw.h.services, 10);
    const set = await call(ADMIN_TOKEN, 'PUT', `/admin/v1/keys/${keyId}/log-bodies`, { mode: 'full' });
    expect(set.status).toBe(200);
    const res = await messages(key, {
      messages: [{ role: 'user', content: 'mail me at ann@example.com, ok' }],
    });
    expect(res.status).toBe(200);
    await res.text();
    const [row] = await until(async () => {
      const got = await logsOf(key);
      expect(got).toHaveLength(1);
      return got;
    });
    const detail = (await call(key, 'GET', `/api/v1/logs/${row.logId}`)).json.data;
    expect(detail.bodies.request).toContain('mail me at [redacted], ok');
    expect(detail.bodies.request.includes('ann@example.com')).toBe(false);
    expect(JSON.parse(detail.bodies.response)).toMatchObject({
      usage: { input_tokens: 12, output_tokens: 3 },
    });
    expect(detail.requestBytes).toBeGreaterThan(0);
    expect(detail.responseBytes).toBe(Buffer.byteLength(detail.bodies.response));
    const audit = await call(ADMIN_TOKEN, 'GET', `/admin/v1/audit?target=key:${keyId}`);
    expect(audit.json.data.items[0]).toMatchObject({
      action: 'logs.bodies.set',
      accountId,
      before: { mode: null },
      after: { mode: 'full' },
    });
    const bad = await call(ADMIN_TOKEN, 'PUT', `/admin/v1/keys/${keyId}/log-bodies`, { mode: 'all' });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('body.mode: must be one of off, metadata, full');
  });
});
