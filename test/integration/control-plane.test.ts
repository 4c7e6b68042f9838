import { createHmac } from 'node:crypto';
import { MockVendor } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { startReceiver } from '../helpers/receiver';
import { ADMIN_TOKEN, fundedKey } from '../helpers/services';
import { describeRedis, dropPrefix, storeModes, uniquePrefix } from '../helpers/redis';
import { eventually } from '../helpers/eventually';
import { dayOf } from '../../src/accounts/usage';

/** Priced so that one messages call (12 in, 3 out) costs 18,000 micro-USD and one responses call 62,000. */
const PRICES = {
  'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 },
  'gpt-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 },
};
const MESSAGES_MICROS = 18_000;
const RESPONSES_MICROS = 62_000;
/** basic-image at its default resolution (2K). */
const IMAGE_MICROS = 30_000;

// Response bodies are read field by field in assertions: any keeps them terse, expect() checks the values.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe.each(storeModes)('control plane (%s)', (_mode, redis) => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let prefix: string;

  beforeAll(async () => {
    vendor = await new MockVendor().start();
    prefix = uniquePrefix('cp');
    gw = await startGateway(vendor.url, {
      redis,
      prefix,
      workers: true,
      gateway: { prices: PRICES },
      overlay: { sandbox: { delayMs: 20 }, security: { allowPrivateTargets: true } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    if (redis) await dropPrefix(prefix);
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.base}/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };
  const api = async (key: string, path: string) => {
    const res = await fetch(`${gw.base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type'), text, json: safeJson(text) };
  };
  const messages = (key: string, stream = false) =>
    fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, stream, messages: [] }),
    });
  const responses = (key: string) =>
    fetch(`${gw.base}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', input: 'hi' }),
    });
  const submitImage = async (key: string, prompt = 'a cat') => {
    const res = await fetch(`${gw.base}/api/v1/generateTask/basic-image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { prompt } }),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };

  describe('key lifecycle', () => {
    test('a key with expiresAt and metadata: listed by prefix, never the key; refused once expired', async () => {
      const { accountId } = await gw.h.services.accounts.createAccount('life', 10);
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const created = await admin('POST', `/accounts/${accountId}/keys`, {
        name: 'ci',
        expiresAt,
        metadata: { team: 'search', owner: 'ana', tags: ['ci', 'prod'] },
      });
      expect(created.status).toBe(200);
      const { keyId, key } = created.json.data as { keyId: string; key: string };

      expect((await api(key, '/apikeys/current-balance')).status).toBe(200);
      const listed = await admin('GET', `/accounts/${accountId}/keys`);
      expect(JSON.stringify(listed.json)).not.toContain(key);
      const view = (listed.json.data.keys as Json[]).find((k) => k.keyId === keyId)!;
      expect(view).toMatchObject({
        name: 'ci',
        prefix: key.slice(0, 12),
        metadata: { team: 'search', owner: 'ana', tags: ['ci', 'prod'] },
        expiresAt,
        status: 'active',
        revoked: false,
        rotatedFrom: null,
      });
      expect(view.prefix).toMatch(/^gwk_.{8}$/);
      // lastUsedAt: written off the call's path, to the minute.
      await eventually(async () => {
        const one = await admin('GET', `/keys/${keyId}`);
        expect(one.json.data.lastUsedAt).not.toBeNull();
      });
      const { lastUsedAt } = (await admin('GET', `/keys/${keyId}`)).json.data as Json;
      expect(Math.abs(Date.parse(lastUsedAt) - Date.now())).toBeLessThan(60_000);

      await sleepUntil(Date.parse(expiresAt) + 50);
      const refused = await api(key, '/apikeys/current-balance');
      expect(refused.status).toBe(401);
      expect(refused.json.message).toBe('Invalid API key: this key has expired');
      const gateway = await messages(key);
      expect(gateway.status).toBe(401);
      expect(gateway.headers.get('x-should-retry')).toBe('false');
      expect(((await gateway.json()) as Json).type).toBe('error');
      expect((await admin('GET', `/keys/${keyId}`)).json.data.status).toBe('expired');
    });

    test('rotation: a new key at once, the old one works through its grace, then is refused', async () => {
      const {
        accountId,
        key: oldKey,
        keyId: oldId,
      } = await fundedKey(gw.h.services, 10, {
        name: 'svc',
        models: ['claude-test', 'basic-image'],
        metadata: { team: 'ml' },
      });
      const rotated = await admin('POST', `/keys/${oldId}/rotate`, { graceSeconds: 1 });
      expect(rotated.status).toBe(200);
      const { keyId: newId, key: newKey, rotatedFrom, oldKeyExpiresAt } = rotated.json.data as Json;
      expect(rotatedFrom).toBe(oldId);
      expect(newKey).toMatch(/^gwk_/);
      expect((await api(newKey, '/apikeys/current-balance')).status).toBe(200);
      expect((await api(oldKey, '/apikeys/current-balance')).status).toBe(200);
      const fresh = (await admin('GET', `/keys/${newId}`)).json.data as Json;
      expect(fresh).toMatchObject({
        accountId,
        name: 'svc',
        models: ['claude-test', 'basic-image'],
        metadata: { team: 'ml' },
        rotatedFrom: oldId,
        status: 'active',
      });

      await sleepUntil(Date.parse(oldKeyExpiresAt) + 50);
      expect((await api(oldKey, '/apikeys/current-balance')).status).toBe(401);
      expect((await messages(oldKey)).status).toBe(401);
      expect((await api(newKey, '/apikeys/current-balance')).status).toBe(200);
      expect((await admin('GET', `/keys/${oldId}`)).json.data.status).toBe('expired');
      // An expired or revoked key has nothing to rotate.
      expect((await admin('POST', `/keys/${oldId}/rotate`, { graceSeconds: 0 })).status).toBe(409);
      await admin('DELETE', `/keys/${newId}`);
      expect((await admin('POST', `/keys/${newId}/rotate`, { graceSeconds: 0 })).status).toBe(409);
    });

    test('grace 0 refuses the old key at once, on the task API and the gateway', async () => {
      const { key: oldKey, keyId: oldId } = await fundedKey(gw.h.services, 10);
      expect((await messages(oldKey)).status).toBe(200);
      const rotated = await admin('POST', `/keys/${oldId}/rotate`, { graceSeconds: 0 });
      expect((await api(oldKey, '/apikeys/current-balance')).status).toBe(401);
      expect((await messages(oldKey)).status).toBe(401);
      expect((await messages(rotated.json.data.key as string)).status).toBe(200);
    });

    test('bad lifecycle input is a 400 naming the field, and creates nothing', async () => {
      const { accountId } = await gw.h.services.accounts.createAccount('bad', 0);
      const cases: [unknown, string][] = [
        [{ expiresAt: '2020-01-01T00:00:00Z' }, 'body.expiresAt: must be in the future'],
        [{ expiresAt: 'tomorrow' }, 'body.expiresAt: must be an ISO 8601 date-time'],
        [{ metadata: { nested: { a: 1 } } }, 'body.metadata.nested'],
        [{ metadata: 'x' }, 'body.metadata'],
      ];
      for (const [body, message] of cases) {
        const res = await admin('POST', `/accounts/${accountId}/keys`, body);
        expect(res.status).toBe(400);
        expect(res.json.message).toContain(message);
      }
      expect((await admin('GET', `/accounts/${accountId}/keys`)).json.data.keys).toEqual([]);
      const { keyId } = await gw.h.services.accounts.createKey(accountId, {});
      const rotate = await admin('POST', `/keys/${keyId}/rotate`, {});
      expect(rotate.status).toBe(400);
      expect(rotate.json.message).toContain('body.graceSeconds');
      expect((await admin('POST', '/keys/key_nope/rotate', { graceSeconds: 1 })).status).toBe(404);
      expect((await admin('GET', `/accounts/${accountId}/keys`)).json.data.keys).toHaveLength(1);
    });
  });

  describe('usage reports', () => {
    test('by model, key and day: requests, tokens and spend split by source, adding up to the ledger', async () => {
      const { accountId, key, keyId } = await fundedKey(gw.h.services, 10);
      const second = await gw.h.services.accounts.createKey(accountId, { name: 'second' });
      expect((await messages(key)).status).toBe(200);
      expect((await messages(key)).status).toBe(200);
      expect((await responses(second.key)).status).toBe(200);
      const ok = await submitImage(key);
      expect(ok.status).toBe(200);
      const failing = await submitImage(key, 'a dog [sandbox:fail=UPSTREAM_ERROR]');
      expect(failing.status).toBe(200);
      // The failed task is refunded by the worker.
      await eventually(async () => {
        const ledger = await gw.h.services.accounts.ledger(accountId);
        expect(ledger.filter((e) => e.kind === 'refund')).toHaveLength(1);
      });

      const byModel = await api(key, '/usage?groupBy=model');
      expect(byModel.status).toBe(200);
      const rows = byModel.json.data.rows as Json[];
      const row = (model: string) => rows.find((r) => r.model === model);
      expect(row('claude-test')).toMatchObject({
        requests: 2,
        inputTokens: 24,
        outputTokens: 6,
        spendMicros: 2 * MESSAGES_MICROS,
        gateway: { requests: 2, spendMicros: 2 * MESSAGES_MICROS },
        tasks: { requests: 0, spendMicros: 0 },
      });
      expect(row('gpt-test')).toMatchObject({
        requests: 1,
        inputTokens: 32,
        cachedTokens: 8,
        outputTokens: 9,
        reasoningTokens: 2,
        spendMicros: RESPONSES_MICROS,
        spendUsd: 0.062,
      });
      // Two tasks charged, one refunded: two requests, one task's price spent.
      expect(row('basic-image')).toMatchObject({
        requests: 2,
        spendMicros: IMAGE_MICROS,
        tasks: { requests: 2, spendMicros: IMAGE_MICROS, spendUsd: 0.03 },
        gateway: { requests: 0, spendMicros: 0 },
      });

      // The report's spend is the ledger's: charges minus refunds, to the micro-dollar.
      const ledger = await gw.h.services.accounts.ledger(accountId);
      const net = ledger.reduce(
        (sum, e) => sum + (e.kind === 'charge' ? e.amountMicros : e.kind === 'refund' ? -e.amountMicros : 0),
        0,
      );
      expect(byModel.json.data.totals.spendMicros).toBe(net);
      expect(net).toBe(2 * MESSAGES_MICROS + RESPONSES_MICROS + IMAGE_MICROS);

      const byKey = (await api(key, '/usage?groupBy=key')).json.data.rows as Json[];
      expect(byKey.find((r) => r.keyId === keyId)).toMatchObject({
        requests: 4,
        spendMicros: 2 * MESSAGES_MICROS + IMAGE_MICROS,
      });
      expect(byKey.find((r) => r.keyId === second.keyId)).toMatchObject({
        requests: 1,
        spendMicros: RESPONSES_MICROS,
      });

      const today = dayOf(Date.now());
      const byDay = (await api(key, `/usage?groupBy=day&from=${today}&to=${today}`)).json.data as Json;
      expect(byDay.rows).toEqual([expect.objectContaining({ day: today, spendMicros: net, requests: 5 })]);

      const csv = await api(key, '/usage?groupBy=model&format=csv');
      expect(csv.status).toBe(200);
      expect(csv.type).toMatch(/^text\/csv/);
      const lines = csv.text.trim().split('\r\n');
      expect(lines[0]).toBe(
        'model,requests,input_tokens,output_tokens,cached_tokens,cache_write_tokens,reasoning_tokens,gateway_requests,gateway_spend_usd,task_requests,task_spend_usd,spend_usd',
      );
      expect(lines).toContain('claude-test,2,24,6,0,0,0,2,0.036000,0,0.000000,0.036000');
      expect(lines).toContain('basic-image,2,0,0,0,0,0,0,0.000000,2,0.030000,0.030000');

      // The admin sees the same for the account, and the account among all.
      const adminView = await admin('GET', `/usage?groupBy=model&accountId=${accountId}`);
      expect(adminView.json.data.rows).toEqual(byModel.json.data.rows);
      const all = await admin('GET', '/usage?groupBy=key');
      expect((all.json.data.rows as Json[]).find((r) => r.keyId === second.keyId)).toMatchObject({
        spendMicros: RESPONSES_MICROS,
      });
    });

    test('bad report queries are 400s naming the parameter', async () => {
      const { key } = await fundedKey(gw.h.services, 1);
      const cases: [string, string][] = [
        ['groupBy=week', 'query.groupBy: must be one of day, model, key'],
        ['format=xml', 'query.format: must be one of json, csv'],
        ['from=2026-02-30', 'query.from: must be a real calendar date'],
        ['from=2026-11-20&to=2026-11-01', 'query.from: must not be after query.to'],
        ['from=2020-01-01&to=2026-01-01', 'query.from: the range must span at most'],
        ['bogus=1', 'query: unknown field(s) bogus'],
      ];
      for (const [query, message] of cases) {
        const res = await api(key, `/usage?${query}`);
        expect(res.status).toBe(400);
        expect(res.json.message).toContain(message);
      }
      expect((await admin('GET', '/usage?accountId=acct_nope')).status).toBe(404);
    });
  });

  describe('budgets', () => {
    test('a key budget: soft and hard events, the next gateway call refused in the vendor shape', async () => {
      const receiver = await startReceiver();
      try {
        const { accountId, key, keyId } = await fundedKey(gw.h.services, 10);
        const put = await admin('PUT', `/keys/${keyId}/budget`, {
          period: 'day',
          limitUsd: 0.03,
          softPercent: 50,
          webhookUrl: receiver.url,
        });
        expect(put.status).toBe(200);
        expect(put.json.data).toMatchObject({
          scope: 'key',
          keyId,
          period: 'day',
          limitUsd: 0.03,
          softPercent: 50,
          spentUsd: 0,
          exceeded: false,
        });
        expect((await messages(key)).status).toBe(200); // 0.018: over the soft threshold
        // Reading the budget posts what this replica served (its tab) first: the spend is exact, and the soft
        // threshold is crossed by this call alone.
        const read = await admin('GET', `/keys/${keyId}/budget`);
        expect(read.json.data).toMatchObject({ spentUsd: 0.018, exceeded: false });
        const streamed = await messages(key, true); // +0.044 = 0.062: crosses the limit while it streams, and finishes
        expect(streamed.status).toBe(200);
        expect(await streamed.text()).toContain('message_stop');
        await eventually(async () => {
          const refused = await messages(key);
          expect(refused.status).toBe(402);
          expect(refused.headers.get('x-should-retry')).toBe('false');
          const body = (await refused.json()) as Json;
          expect(body.type).toBe('error');
          expect(body.error.message).toMatch(
            /^Budget exceeded: this API key has spent 0\.0\d+ of its 0\.03 USD daily budget/,
          );
        });
        // Another key of the account is not held by this key's budget.
        const other = await gw.h.services.accounts.createKey(accountId, {});
        expect((await messages(other.key)).status).toBe(200);

        await receiver.waitFor(2);
        const events = receiver.received.map((r) => JSON.parse(r.rawBody.toString()) as Json);
        expect(events.map((e) => [e.type, e.data.level, e.data.spentUsd])).toEqual([
          ['budget.threshold', 'soft', 0.018],
          ['budget.threshold', 'hard', 0.062],
        ]);
        expect(events[1].data).toMatchObject({
          accountId,
          scope: 'key',
          keyId,
          limitUsd: 0.03,
          period: 'day',
        });
        const { secret } = await gw.h.services.webhookSecrets.current(accountId);
        const r = receiver.received[1];
        const signature = createHmac('sha256', secret)
          .update(`${r.eventId}.${r.timestamp}.${r.rawBody.toString()}`)
          .digest('hex');
        expect(r.signature).toContain(signature);

        // Removing the budget lets the key call again.
        expect((await admin('DELETE', `/keys/${keyId}/budget`)).status).toBe(200);
        await eventually(async () => expect((await messages(key)).status).toBe(200));
        expect((await admin('GET', `/keys/${keyId}/budget`)).status).toBe(404);
      } finally {
        await receiver.close();
      }
    });

    test('an account budget refuses a task that would go over it: 402 envelope, nothing charged or written', async () => {
      const { accountId, key } = await fundedKey(gw.h.services, 10);
      await admin('PUT', `/accounts/${accountId}/budget`, { period: 'month', limitUsd: 0.05 });
      expect((await submitImage(key)).status).toBe(200); // 0.03 of 0.05
      const balance = await gw.h.services.accounts.balanceUsd(accountId);
      const refused = await submitImage(key);
      expect(refused.status).toBe(402);
      expect(refused.json).toMatchObject({ code: 402, data: null });
      expect(refused.json.message).toContain(
        'Budget exceeded: this account has spent 0.03 of its 0.05 USD monthly budget',
      );
      expect(await gw.h.services.accounts.balanceUsd(accountId)).toBe(balance);
      const tasks = await api(key, '/tasks');
      expect(tasks.json.data.items).toHaveLength(1);
      const budgets = await api(key, '/budgets');
      expect(budgets.json.data.budgets).toEqual([
        expect.objectContaining({ scope: 'account', spentUsd: 0.03, remainingUsd: 0.02, exceeded: false }),
      ]);
    });

    test('a fixed window counts what is posted inside it, and nothing outside it', async () => {
      const { accountId, key, keyId } = await fundedKey(gw.h.services, 10);
      const startsAt = new Date(Date.now() - 1000).toISOString();
      const endsAt = new Date(Date.now() + 3_600_000).toISOString();
      const put = await admin('PUT', `/accounts/${accountId}/budget`, {
        period: 'window',
        limitUsd: 0.05,
        startsAt,
        endsAt,
      });
      expect(put.status).toBe(200);
      expect(put.json.data).toMatchObject({
        period: 'window',
        periodStart: startsAt,
        periodEnd: endsAt,
        active: true,
        spentUsd: 0,
      });
      // A key's window that has not begun: its spend is not counted and it refuses nothing.
      const later = new Date(Date.now() + 7_200_000).toISOString();
      const laterEnd = new Date(Date.now() + 9_000_000).toISOString();
      await admin('PUT', `/keys/${keyId}/budget`, {
        period: 'window',
        limitUsd: 0,
        startsAt: later,
        endsAt: laterEnd,
      });
      expect((await submitImage(key)).status).toBe(200); // 0.03 of 0.05
      const refused = await submitImage(key);
      expect(refused.status).toBe(402);
      expect(refused.json.message).toBe(
        `Budget exceeded: this account has spent 0.03 of its 0.05 USD budget for ${startsAt} to ${endsAt}`,
      );
      expect((await admin('GET', `/accounts/${accountId}/budget`)).json.data).toMatchObject({
        spentUsd: 0.03,
        remainingUsd: 0.02,
      });
      expect((await admin('GET', `/keys/${keyId}/budget`)).json.data).toMatchObject({
        period: 'window',
        active: false,
        spentUsd: 0,
        exceeded: false,
      });
      // A rotated key keeps its window budget, bounds included.
      const rotated = await admin('POST', `/keys/${keyId}/rotate`, { graceSeconds: 60 });
      expect((await admin('GET', `/keys/${rotated.json.data.keyId}/budget`)).json.data).toMatchObject({
        period: 'window',
        periodStart: later,
        periodEnd: laterEnd,
        limitUsd: 0,
      });
      // The gateway is held by the window too once it is spent.
      await admin('PUT', `/accounts/${accountId}/budget`, {
        period: 'window',
        limitUsd: 0.03,
        startsAt,
        endsAt,
      });
      await eventually(async () => expect((await messages(key)).status).toBe(402));
    });

    test('bad budgets are 400s naming the field; unknown targets 404', async () => {
      const { accountId, keyId } = await fundedKey(gw.h.services, 1);
      const cases: [unknown, string][] = [
        [{ period: 'week', limitUsd: 1 }, 'body.period: must be one of day, month, window'],
        [{ period: 'window', limitUsd: 1 }, 'body.startsAt: a window needs startsAt and endsAt'],
        [
          { period: 'window', limitUsd: 1, startsAt: '2030-01-02T00:00:00Z', endsAt: '2030-01-01T00:00:00Z' },
          'body.endsAt: must be after startsAt',
        ],
        [
          { period: 'day', limitUsd: 1, startsAt: '2030-01-02T00:00:00Z' },
          'body.startsAt: only a window has startsAt and endsAt',
        ],
        [{ period: 'day', limitUsd: -1 }, 'body.limitUsd'],
        [{ period: 'day', limitUsd: 1, softPercent: 150 }, 'body.softPercent'],
        [{ period: 'day' }, 'body.limitUsd'],
        [{ period: 'day', limitUsd: 1, webhookUrl: 'ftp://x' }, 'body.webhookUrl'],
      ];
      for (const [body, message] of cases) {
        const res = await admin('PUT', `/keys/${keyId}/budget`, body);
        expect(res.status).toBe(400);
        expect(res.json.message).toContain(message);
      }
      expect((await admin('GET', `/accounts/${accountId}/budgets`)).json.data.budgets).toEqual([]);
      expect((await admin('PUT', '/keys/key_nope/budget', { period: 'day', limitUsd: 1 })).status).toBe(404);
      expect((await admin('PUT', '/accounts/acct_nope/budget', { period: 'day', limitUsd: 1 })).status).toBe(
        404,
      );
    });
  });
});

describeRedis('control plane across two replicas', () => {
  let vendor: MockVendor;
  let a: RunningGateway;
  let b: RunningGateway;
  const prefix = uniquePrefix('cp2');

  beforeAll(async () => {
    vendor = await new MockVendor().start();
    const options = { redis: true, prefix, gateway: { prices: PRICES } };
    a = await startGateway(vendor.url, options);
    b = await startGateway(vendor.url, options);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await vendor?.stop();
    await dropPrefix(prefix);
  });

  const call = (gw: RunningGateway, key: string) =>
    fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 8, messages: [] }),
    }).then(async (r) => (await r.arrayBuffer(), r.status));

  test('an account budget spent on one replica is refused on the other; usage adds up over both', async () => {
    const { accountId, key } = await fundedKey(a.h.services, 10);
    await a.h.services.budgets.set(accountId, 'account', { period: 'day', limitUsd: 0.05 });
    expect(await call(b, key)).toBe(200); // b reads the budget: 0.018 spent
    expect(await call(a, key)).toBe(200); // 0.036
    expect(await call(a, key)).toBe(200); // 0.054: over
    // Each replica learns the other's spend within its flush and refresh intervals (docs/decisions.md); calls let
    // through meanwhile are served and charged.
    let served = 3;
    const refusedOn = (gw: RunningGateway) =>
      eventually(async () => {
        const status = await call(gw, key);
        if (status === 200) served++;
        expect(status).toBe(402);
      });
    await refusedOn(b);
    await refusedOn(a);
    await a.h.services.gateway.flushUsage();
    await b.h.services.gateway.flushUsage();
    const report = await b.h.services.usageReports.report(accountId, { groupBy: 'key' });
    expect(report.totals.spendMicros).toBe(served * MESSAGES_MICROS);
    expect(report.totals.requests).toBe(served);
    // The ledger holds tabs (one per replica, key and model per flush): their sum is every served call's price.
    const charged = (await a.h.services.accounts.ledger(accountId)).filter((e) => e.kind === 'charge');
    expect(charged.reduce((sum, e) => sum + e.amountMicros, 0)).toBe(served * MESSAGES_MICROS);
    expect(charged.length).toBeLessThanOrEqual(served);
  });

  test('a rotated key is refused on the other replica once its grace ends', async () => {
    const { key, keyId } = await fundedKey(a.h.services, 10);
    expect(await call(b, key)).toBe(200);
    const rotated = await a.h.services.accounts.rotateKey(keyId, 1);
    expect(await call(b, key)).toBe(200);
    expect(await call(b, rotated.key)).toBe(200);
    await sleepUntil(Date.parse(rotated.oldKeyExpiresAt) + 50);
    expect(await call(b, key)).toBe(401);
    expect(await call(a, key)).toBe(401);
  });
});

function safeJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return {};
  }
}

async function sleepUntil(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
