import type http from 'node:http';
import { settled } from '../helpers/eventually';
import { MockVendor, type Received } from '../helpers/mock-vendor';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { ADMIN_TOKEN, fundedKey } from '../helpers/services';
import { dropPrefix, storeModes, uniquePrefix } from '../helpers/redis';

/** One messages call (12 in, 3 out) costs 18,000 micro-USD. */
const PRICES = {
  'claude-test': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 },
  'gpt-bg': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 },
  'gemini-priced': { inputPerMTokUsd: 1000, outputPerMTokUsd: 2000 },
};
const CALL = 18_000;
/** basic-image at its default resolution (2K). */
const IMAGE = 30_000;

/**
 * Priced gateway calls go on per-key tabs posted once per `gateway.chargeFlushMs` (src/gateway/charges.ts). The
 * interval is long here, so every check below happens before a flush: what is owed must count on its own.
 */
describe.each(storeModes)('gateway charges as tabs (%s)', (_mode, redis) => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  const prefix = uniquePrefix('tabs');
  beforeAll(async () => {
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url, {
      redis,
      prefix,
      gateway: { prices: PRICES, chargeFlushMs: 5_000 },
      overlay: { sandbox: { delayMs: 20 } },
    });
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.stop();
    if (redis) await dropPrefix(prefix);
  });

  const messages = (key: string, model = 'claude-test') =>
    fetch(`${gw.base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, max_tokens: 8, messages: [] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { message: string } } }));
  /** The ledger as the store holds it, without posting this replica's tabs first. */
  const stored = async (accountId: string) =>
    (await gw.h.services.store.accounts.ledger(accountId)).map((e) => [e.kind, e.amountMicros]);

  test("one interval's calls are one ledger charge of their summed price, posted when a balance is read", async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 0.1);
    for (let i = 0; i < 5; i++) expect((await messages(key)).status).toBe(200);
    expect(gw.h.services.charges.byAccount(accountId)).toBe(5 * CALL);
    expect(await stored(accountId)).toEqual([['credit', 100_000]]); // not yet posted

    const res = await fetch(`${gw.base}/api/v1/apikeys/current-balance`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(((await res.json()) as { data: number }).data).toBe(0.01);
    const ledger = await gw.h.services.store.accounts.ledger(accountId);
    expect(ledger.map((e) => [e.kind, e.amountMicros, e.balanceAfterMicros])).toEqual([
      ['credit', 100_000, 100_000],
      ['charge', 5 * CALL, 10_000],
    ]);
    expect(ledger[1].reference).toMatch(/^llm:[0-9a-f-]{36}$/);
    expect(gw.h.services.charges.byAccount(accountId)).toBe(0);
  });

  test('the call that owes the whole balance refuses the next before it reaches the vendor; the tab takes what is left', async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 0.02);
    expect((await messages(key)).status).toBe(200); // owes 18,000 of 20,000
    expect((await messages(key)).status).toBe(200); // owes 36,000: more than the balance
    const before = vendor.received.length;
    const refused = await messages(key);
    expect(refused.status).toBe(402);
    expect(refused.body.error?.message).toBe(
      'Insufficient balance: this account has no balance left for metered models',
    );
    expect(vendor.received.length).toBe(before);
    expect(await stored(accountId)).toEqual([['credit', 20_000]]);
    expect((await gw.h.services.accounts.describeAccount(accountId)).balanceUsd).toBe(0);
    expect(await stored(accountId)).toEqual([
      ['credit', 20_000],
      ['charge', 20_000],
    ]);
  });

  test('a background response is charged when it is read finished: once, at the price of a call', async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 1);
    const usage = { input_tokens: 12, output_tokens: 3 };
    // The vendor names the snapshot; the call was for its alias, which is priced.
    const answer = (status: string, done: boolean) => (_r: Received, res: http.ServerResponse) => {
      const body = JSON.stringify({
        id: 'resp_bg_1',
        object: 'response',
        status,
        model: 'gpt-bg-2025-01-01',
        output: [],
        usage: done ? usage : null,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    /** Micro-USD charged so far (a balance read posts what is owed). */
    const spent = async () =>
      Math.round((1 - (await gw.h.services.accounts.describeAccount(accountId)).balanceUsd) * 1e6);
    vendor.next(answer('queued', false));
    const body = JSON.stringify({ model: 'gpt-bg', input: 'x', background: true });
    expect((await fetch(`${gw.base}/v1/responses`, { method: 'POST', headers, body })).status).toBe(200);
    vendor.next(answer('in_progress', false));
    expect((await fetch(`${gw.base}/v1/responses/resp_bg_1`, { headers })).status).toBe(200);
    expect(await spent()).toBe(0);
    for (let i = 0; i < 3; i++) {
      vendor.next(answer('completed', true));
      expect((await fetch(`${gw.base}/v1/responses/resp_bg_1`, { headers })).status).toBe(200);
    }
    // 12 in and 3 out at 1000 / 2000 USD per MTok, as the call would have cost (not at the batch factor).
    expect(await settled(spent, CALL)).toBe(CALL);
    await new Promise((r) => setTimeout(r, 200));
    expect(await spent()).toBe(CALL); // read three times, charged once
  });

  test('a priced Gemini call asking the vendor to leave its usage out (field mask, protobuf) is refused', async () => {
    const { key } = await fundedKey(gw.h.services, 1);
    const generate = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${gw.base}/v1beta/models/gemini-priced:generateContent${query}`, {
        method: 'POST',
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json', ...headers },
        body: '{"contents":[{"parts":[{"text":"x"}]}]}',
      });
    const before = vendor.received.length;
    for (const [query, headers] of [
      ['?fields=candidates', {}],
      ['?%24fields=candidates', {}],
      ['', { 'x-goog-fieldmask': 'candidates' }],
      ['?alt=proto', {}],
      ['?%24alt=proto', {}],
    ] as [string, Record<string, string>][]) {
      const r = await generate(query, headers);
      expect([query, headers, r.status]).toEqual([query, headers, 400]);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/on a metered call/);
    }
    expect(vendor.received.length).toBe(before);
    // A mask that keeps the usage is the client's to ask for.
    expect((await generate('?fields=candidates,usageMetadata')).status).toBe(200);
    expect(vendor.received.length).toBe(before + 1);
  });

  test("a priced name's dated snapshots cost what it does; another name does not", async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 1);
    for (const model of ['claude-test-20250514', 'claude-test-2025-05-14'])
      expect([model, (await messages(key, model)).status]).toEqual([model, 200]);
    expect(gw.h.services.charges.byAccount(accountId)).toBe(2 * CALL);
    for (const model of ['claude-test-x', 'claude-testing-20250514', 'claude-test-2025'])
      expect([model, (await messages(key, model)).status]).toEqual([model, 200]);
    expect(gw.h.services.charges.byAccount(accountId)).toBe(2 * CALL);
  });

  test('an OpenAI batch (its models inside an uploaded file) needs a balance left, as a priced call does', async () => {
    const batch = (key: string) =>
      fetch(`${gw.base}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          input_file_id: 'file-in',
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
      });
    const before = vendor.received.length;
    const { key: broke } = await fundedKey(gw.h.services, 0);
    const refused = await batch(broke);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    expect(vendor.received.length).toBe(before);
    const { key } = await fundedKey(gw.h.services, 1);
    expect((await batch(key)).status).not.toBe(402); // forwarded: the mock vendor's own answer
    expect(vendor.received.length).toBe(before + 1);
  });

  test("a key's hard budget crossed by calls not yet posted refuses the next call at once; the budget read posts them", async () => {
    const { accountId, key, keyId } = await fundedKey(gw.h.services, 10);
    await gw.h.services.budgets.set(accountId, `key:${keyId}`, {
      period: 'day',
      limitUsd: 0.03,
      softPercent: 50,
    });
    expect((await messages(key)).status).toBe(200); // 0.018
    expect((await messages(key)).status).toBe(200); // 0.036: over, owed only
    const refused = await messages(key);
    expect(refused.status).toBe(402);
    expect(refused.body.error?.message).toMatch(
      /^Budget exceeded: this API key has spent 0\.036 of its 0\.03 USD daily budget/,
    );
    const res = await fetch(`${gw.base}/admin/v1/keys/${keyId}/budget`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ spentUsd: 0.036, exceeded: true });
  });

  test('under concurrent calls, balance reads and flushes, every call is charged once: ledger, balance and report agree', async () => {
    const fast = { rateLimit: { ratePerSec: 10_000, burst: 10_000 } };
    const { accountId, key } = await fundedKey(gw.h.services, 100, fast);
    const other = await gw.h.services.accounts.createKey(accountId, fast);
    const CALLS = 120;
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        expect((await messages(i % 2 ? key : other.key)).status).toBe(200);
        if (i % 10 === 0) await gw.h.services.accounts.balanceUsd(accountId); // settles the tabs mid-run
        if (i % 25 === 0) void gw.h.services.charges.flush();
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const ledger = await gw.h.services.accounts.ledger(accountId);
    const charged = ledger.filter((e) => e.kind === 'charge');
    expect(charged.reduce((sum, e) => sum + e.amountMicros, 0)).toBe(CALLS * CALL);
    expect(new Set(charged.map((e) => e.reference)).size).toBe(charged.length);
    expect(charged.length).toBeLessThan(CALLS / 2);
    expect(ledger.at(-1)!.balanceAfterMicros).toBe(100_000_000 - CALLS * CALL);
    expect((await gw.h.services.accounts.describeAccount(accountId)).balanceUsd).toBe(
      (100_000_000 - CALLS * CALL) / 1e6,
    );
    await gw.h.services.gateway.flushUsage();
    const report = await gw.h.services.usageReports.report(accountId, { groupBy: 'key' });
    expect(report.totals.gateway).toMatchObject({ requests: CALLS, spendMicros: CALLS * CALL });
  });

  test('a task submitted while calls are owed is checked against the balance after them', async () => {
    const { accountId, key } = await fundedKey(gw.h.services, 0.05);
    expect((await messages(key)).status).toBe(200);
    expect((await messages(key)).status).toBe(200); // owes 36,000 of 50,000: 14,000 left for a 30,000 image
    const res = await fetch(`${gw.base}/api/v1/generateTask/basic-image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { prompt: 'a cat' } }),
    });
    expect(res.status).toBe(402);
    const body = (await res.json()) as { message: string };
    expect(body.message).toContain(`${IMAGE / 1e6}`);
    expect(body.message).toContain('0.014');
    expect(await stored(accountId)).toEqual([
      ['credit', 50_000],
      ['charge', 2 * CALL],
    ]);
  });
});
