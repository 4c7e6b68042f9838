import fs from 'node:fs';
import path from 'node:path';
import { MockVendor } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { ADMIN_TOKEN, fundedKey } from '../helpers/services';
import { dropPrefix, storeModes, uniquePrefix } from '../helpers/redis';
import { dayOf } from '../../src/accounts/usage';
import { CONSOLE_DIR, consoleCsp } from '../../src/http/console';

/** One messages call (12 in, 3 out) costs 18,000 micro-USD; basic-image at its default resolution 30,000. */
const PRICES = { 'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 } };

// Response bodies are read field by field in assertions: any keeps them terse, expect() checks the values.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe.each(storeModes)('the console API (%s)', (_mode, redis) => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let prefix: string;

  beforeAll(async () => {
    vendor = await new MockVendor().start();
    prefix = uniquePrefix('console');
    gw = await startGateway(vendor.url, {
      redis,
      prefix,
      workers: true,
      gateway: { prices: PRICES },
      overlay: { sandbox: { delayMs: 20 } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    if (redis) await dropPrefix(prefix);
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
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) as Json };
  };
  const messages = (key: string) =>
    fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
    });

  test("GET /api/v1/account: the caller's account, its name, balance and the calling key", async () => {
    const { accountId, key, keyId } = await fundedKey(gw.h.services, 12.5);
    const { status, json } = await call(key, 'GET', '/api/v1/account');
    expect(status).toBe(200);
    expect(json.data).toMatchObject({
      accountId,
      name: 'test',
      keyId,
      balanceUsd: 12.5,
      webhookScheme: 'genway',
    });
  });

  describe('an account manages its own keys', () => {
    test('create: the key once, then listed by prefix; it works at once', async () => {
      const { accountId, key } = await fundedKey(gw.h.services, 5);
      const created = await call(key, 'POST', '/api/v1/keys', {
        name: 'ci',
        models: ['claude-test'],
        expiresAt: '2099-01-01T00:00:00Z',
        metadata: { team: 'search' },
      });
      expect(created.status).toBe(200);
      const view = created.json.data;
      expect(view).toMatchObject({
        accountId,
        name: 'ci',
        models: ['claude-test'],
        status: 'active',
        expiresAt: '2099-01-01T00:00:00.000Z',
        metadata: { team: 'search' },
        prefix: view.key.slice(0, 12),
      });
      const listed = await call(key, 'GET', '/api/v1/keys');
      expect(listed.json.data.keys.map((k: Json) => k.keyId)).toContain(view.keyId);
      expect(listed.text).not.toContain(view.key);
      expect((await call(view.key, 'GET', '/api/v1/account')).json.data.keyId).toBe(view.keyId);
    });

    test('refused without changing anything: a restricted key, a rate limit, a bad field, another account', async () => {
      const { key } = await fundedKey(gw.h.services, 5);
      const restricted = await call(key, 'POST', '/api/v1/keys', { name: 'narrow', models: ['claude-test'] });
      const before = (await call(key, 'GET', '/api/v1/keys')).json.data.keys.length;

      const fromRestricted = await call(restricted.json.data.key, 'POST', '/api/v1/keys', { name: 'wide' });
      expect(fromRestricted.status).toBe(403);
      expect(fromRestricted.json.message).toBe(
        'This key has a model allow-list: managing keys needs a key without one, or the admin API',
      );
      const limit = await call(key, 'POST', '/api/v1/keys', { rateLimit: { ratePerSec: 1000, burst: 1000 } });
      expect(limit.status).toBe(403);
      expect(limit.json.message).toBe("body.rateLimit: a key's rate limit is set by the admin API only");
      const badExpiry = await call(key, 'POST', '/api/v1/keys', { expiresAt: 'tomorrow' });
      expect(badExpiry.status).toBe(400);
      expect(badExpiry.json.message).toContain('body.expiresAt');
      expect((await call(key, 'GET', '/api/v1/keys')).json.data.keys.length).toBe(before);

      const other = await fundedKey(gw.h.services, 5);
      const revokeOther = await call(key, 'DELETE', `/api/v1/keys/${other.keyId}`);
      expect(revokeOther.status).toBe(404);
      expect(revokeOther.json.message).toBe(`No key with keyId ${other.keyId}`);
      expect(
        (await call(key, 'POST', `/api/v1/keys/${other.keyId}/rotate`, { graceSeconds: 0 })).status,
      ).toBe(404);
      expect((await call(other.key, 'GET', '/api/v1/account')).status).toBe(200);
      const revokeFromRestricted = await call(
        restricted.json.data.key,
        'DELETE',
        `/api/v1/keys/${other.keyId}`,
      );
      expect(revokeFromRestricted.status).toBe(403);
    });

    test('rotate with grace and revoke: the new key works, the revoked one is refused on both surfaces', async () => {
      const { key, keyId } = await fundedKey(gw.h.services, 5);
      const second = (await call(key, 'POST', '/api/v1/keys', { name: 'second' })).json.data;
      const rotated = await call(key, 'POST', `/api/v1/keys/${second.keyId}/rotate`, { graceSeconds: 3600 });
      expect(rotated.status).toBe(200);
      expect(rotated.json.data).toMatchObject({ rotatedFrom: second.keyId });
      expect(Date.parse(rotated.json.data.oldKeyExpiresAt) - Date.now()).toBeGreaterThan(3500_000);
      expect((await call(rotated.json.data.key, 'GET', '/api/v1/account')).status).toBe(200);
      expect((await call(second.key, 'GET', '/api/v1/account')).status).toBe(200);

      const revoked = await call(key, 'DELETE', `/api/v1/keys/${rotated.json.data.keyId}`);
      expect(revoked.json.data).toEqual({ keyId: rotated.json.data.keyId, revoked: true });
      const refused = await call(rotated.json.data.key, 'GET', '/api/v1/account');
      expect(refused.status).toBe(401);
      expect(refused.json.message).toBe('Invalid API key: this key has been revoked');
      expect((await messages(rotated.json.data.key)).status).toBe(401);
      expect((await call(key, 'GET', '/api/v1/account')).json.data.keyId).toBe(keyId);
    });
  });

  describe('the admin acts for one account (genway-account)', () => {
    test('reads and submits as the account; charged to it, recorded under key id "admin"', async () => {
      const { accountId } = await fundedKey(gw.h.services, 1);
      const as = { 'genway-account': accountId };
      const account = await call(ADMIN_TOKEN, 'GET', '/api/v1/account', undefined, as);
      expect(account.json.data).toMatchObject({ accountId, keyId: 'admin', balanceUsd: 1 });
      const submitted = await call(
        ADMIN_TOKEN,
        'POST',
        '/api/v1/generateTask/basic-image',
        { input: { prompt: 'a lighthouse' } },
        as,
      );
      expect(submitted.status).toBe(200);
      expect((await call(ADMIN_TOKEN, 'GET', '/api/v1/account', undefined, as)).json.data.balanceUsd).toBe(
        0.97,
      );
      const listed = await call(ADMIN_TOKEN, 'GET', '/api/v1/tasks', undefined, as);
      expect(listed.text).toContain(submitted.json.data.taskId);
      // The detail view: the input as the task runs it (defaults applied), the charge and what was refunded.
      const detail = await call(
        ADMIN_TOKEN,
        'GET',
        `/api/v1/tasks/${submitted.json.data.taskId}`,
        undefined,
        as,
      );
      expect(detail.json.data).toMatchObject({
        model: 'basic-image',
        chargeUsd: 0.03,
        refundUsd: 0,
        input: { prompt: 'a lighthouse', resolution: '2K' },
      });
    });

    test('only the admin token may, for an account that exists', async () => {
      const { accountId, key } = await fundedKey(gw.h.services, 1);
      const withKey = await call(key, 'GET', '/api/v1/account', undefined, { 'genway-account': accountId });
      expect(withKey.status).toBe(401);
      expect(withKey.json.message).toBe(
        'Only the admin token may act for an account (header genway-account)',
      );
      const unknown = await call(ADMIN_TOKEN, 'GET', '/api/v1/account', undefined, {
        'genway-account': 'acct_x',
      });
      expect(unknown.status).toBe(404);
      expect((await call(ADMIN_TOKEN, 'GET', '/api/v1/account')).status).toBe(401);
      const wrongToken = await call(`${ADMIN_TOKEN}x`, 'GET', '/api/v1/account', undefined, {
        'genway-account': accountId,
      });
      expect(wrongToken.status).toBe(401);
    });
  });

  test("usage by day and model, and the admin's by account: the ledger's exact spend", async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 5);
    expect((await messages(key)).status).toBe(200);
    expect((await messages(key)).status).toBe(200);
    const task = await call(key, 'POST', '/api/v1/generateTask/basic-image', { input: { prompt: 'a fox' } });
    expect(task.status).toBe(200);
    const today = dayOf(Date.now());
    const report = await call(key, 'GET', `/api/v1/usage?groupBy=day,model&from=${today}&to=${today}`);
    expect(report.status).toBe(200);
    const rows = report.json.data.rows as Json[];
    expect(rows.map((r) => [r.day, r.model])).toEqual([
      [today, 'basic-image'],
      [today, 'claude-test'],
    ]);
    expect(rows[0]).toMatchObject({ requests: 1, tasks: { requests: 1, spendMicros: 30_000 } });
    expect(rows[1]).toMatchObject({
      requests: 2,
      inputTokens: 24,
      outputTokens: 6,
      gateway: { requests: 2, spendMicros: 36_000 },
    });
    const csv = await fetch(
      `${gw.base}/api/v1/usage?groupBy=day,model&from=${today}&to=${today}&format=csv`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    ).then((r) => r.text());
    expect(csv.split('\r\n')[0]).toBe(
      'day,model,requests,input_tokens,output_tokens,cached_tokens,cache_write_tokens,reasoning_tokens,gateway_requests,gateway_spend_usd,task_requests,task_spend_usd,spend_usd',
    );
    expect(csv.split('\r\n')[2]).toBe(`${today},claude-test,2,24,6,0,0,0,2,0.036000,0,0.000000,0.036000`);

    const byAccount = await call(
      ADMIN_TOKEN,
      'GET',
      `/admin/v1/usage?groupBy=account&from=${today}&to=${today}`,
    );
    const mine = (byAccount.json.data.rows as Json[]).find((r) => r.accountId === accountId);
    expect(mine).toMatchObject({ requests: 3, spendMicros: 66_000 });
    const refused = await call(key, 'GET', '/api/v1/usage?groupBy=account');
    expect(refused.status).toBe(400);
    expect(refused.json.message).toBe('query.groupBy: must be one of day, model, key, day,model');
  });

  test('GET /stats: the last hour per surface from the request metrics, 5xx apart from 4xx', async () => {
    const before = (await call(ADMIN_TOKEN, 'GET', '/admin/v1/stats')).json.data;
    const gatewayBefore = before.surfaces.find((s: Json) => s.surface === 'gateway');
    const { key } = await fundedKey(gw.h.services, 5);
    for (let i = 0; i < 3; i++) expect((await messages(key)).status).toBe(200);
    expect((await messages('gwk_wrong')).status).toBe(401);
    vendor.next((_req, res) => {
      res.writeHead(501, { 'content-type': 'application/json' });
      res.end('{"type":"error","error":{"type":"api_error","message":"no"}}');
    });
    expect((await messages(key)).status).toBe(501);

    const after = await call(key, 'GET', '/api/v1/stats');
    expect(after.status).toBe(200);
    const { windowMinutes, surfaces } = after.json.data;
    expect(windowMinutes).toBe(60);
    const gateway = surfaces.find((s: Json) => s.surface === 'gateway');
    expect(gateway.requests - gatewayBefore.requests).toBe(5);
    expect(gateway.serverErrors - gatewayBefore.serverErrors).toBe(1);
    expect(gateway.clientErrors - gatewayBefore.clientErrors).toBe(1);
    expect(gateway.errorRate).toBe(gateway.serverErrors / gateway.requests);
    expect(gateway.latencyMs.p50).toBeGreaterThan(0);
    expect(gateway.latencyMs.p99).toBeGreaterThanOrEqual(gateway.latencyMs.p95);
    expect(gateway.minutes).toHaveLength(60);
    expect(gateway.minutes.reduce((n: number, m: Json) => n + m.requests, 0)).toBe(gateway.requests);
    const tasks = surfaces.find((s: Json) => s.surface === 'tasks');
    expect(tasks.requests).toBeGreaterThan(0);
  });
});

describe('the console is served at /console', () => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  beforeAll(async () => {
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url);
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
  });

  test('built by npm run build, under 200 KB gzipped on first load', () => {
    const build = JSON.parse(fs.readFileSync(path.join(CONSOLE_DIR, 'build.json'), 'utf8')) as Json;
    expect(build.total).toBeLessThan(200 * 1024);
  });

  test('every console path answers the page under a strict CSP; assets are cached for good', async () => {
    const build = JSON.parse(fs.readFileSync(path.join(CONSOLE_DIR, 'build.json'), 'utf8')) as Json;
    const redirect = await fetch(`${gw.base}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');
    for (const page of ['/console/', '/console/keys', '/console/tasks/tsk_123']) {
      const res = await fetch(`${gw.base}${page}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(consoleCsp(gw.base));
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const html = await res.text();
      expect(html).toContain(`<script type="module" src="/console/${build.script}"></script>`);
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      expect(html).not.toMatch(/<style|style="/);
    }
    expect(consoleCsp(gw.base)).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' ${gw.base} https: data: blob:; ` +
        `media-src 'self' ${gw.base} https: blob:; connect-src 'self'; font-src 'self'; manifest-src 'self'; ` +
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(consoleCsp('https://genway.example.com')).not.toContain('genway.example.com');
    const asset = await fetch(`${gw.base}/console/${build.script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await fetch(`${gw.base}/console/assets/app-missing.js`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('Not found\n');
  });
});
