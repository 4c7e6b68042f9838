import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startGateway, VENDOR_KEYS } from '../helpers/gateway';
import { CHAT_JSON, MockVendor } from '../helpers/mock-vendor';
import { adminAccount, listeningPort, PROCESS_ADMIN, redisProcessEnv, startGenway } from '../helpers/process';
import { describeRedis } from '../helpers/redis';
import { ownRedis, type OwnRedis } from '../helpers/redis-server';
import { fundedKey } from '../helpers/services';
import { eventually } from '../helpers/eventually';
import { KEY_GATE_TIMING } from '../../src/store/redis/key-gate';

/**
 * Served calls are charged exactly once however Redis fails: killed with SIGKILL while calls are in flight and kept
 * down longer than the client's retries, and with the Genway process killed too before Redis is back.
 */
const PRICES = { [CHAT_JSON.model]: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } };
const CHAT = JSON.stringify({ model: CHAT_JSON.model, messages: [{ role: 'user', content: 'hi' }] });

/** The next `n` vendor calls wait for release(); then each answers the canned chat completion. */
function holdCalls(vendor: MockVendor, n: number) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  for (let i = 0; i < n; i++) {
    vendor.next(async (_req, res) => {
      await released;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CHAT_JSON));
    });
  }
  return release;
}

function chat(base: string, key: string) {
  return fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: CHAT,
  });
}

async function untilReceived(vendor: MockVendor, count: number) {
  await eventually(() => expect(vendor.received.length).toBeGreaterThanOrEqual(count), 10_000);
}

describeRedis('gateway charges across a Redis outage', () => {
  let redis: OwnRedis;
  let vendor: MockVendor;
  const journalDir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-journal-'));
  beforeAll(async () => {
    redis = await ownRedis();
    vendor = await new MockVendor().start();
  });
  afterAll(async () => {
    await vendor?.stop();
    await redis?.stop();
    fs.rmSync(journalDir, { recursive: true, force: true });
  });

  test('calls served while Redis is down are charged once each when it is back; none is served once the key cannot be checked', async () => {
    const gw = await startGateway(vendor.url, {
      redis: true,
      overlay: { store: { redisUrl: redis.url }, gateway: { prices: PRICES, chargeJournalDir: journalDir } },
    });
    try {
      const { key, accountId } = await fundedKey(gw.h.services, 10);
      const charges = async () =>
        (await gw.h.services.accounts.ledger(accountId)).filter((e) => e.kind === 'charge');

      // One call with Redis up gives the price of a call (reading the ledger posts its tab first).
      expect((await chat(gw.base, key)).status).toBe(200);
      const [{ amountMicros: price }] = await charges();
      expect(price).toBe(26);

      const served = vendor.received.length;
      const release = holdCalls(vendor, 5);
      const calls = Array.from({ length: 5 }, () => chat(gw.base, key));
      await untilReceived(vendor, served + 5);

      await redis.kill('SIGKILL');
      release();
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      for (const a of answers) expect(await a.json()).toEqual(CHAT_JSON);

      // While Redis is down nothing is served once the key cannot be checked: past the key gate's trust in its local
      // state (the 1 s revocation bound; the balance and budgets are held locally too, as for every call), and past
      // ioredis's ride-through (about 2.7 s), a 503 to retry: vendor-shaped on the gateway, the envelope on tasks.
      await new Promise((r) => setTimeout(r, KEY_GATE_TIMING.trustMs + 100));
      const refused = await chat(gw.base, key);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
      const submit = await fetch(`${gw.base}/api/v1/generateTask/image-gen`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { mode: 'text-to-image', prompt: 'x' } }),
      });
      expect(submit.status).toBe(503);
      expect(((await submit.json()) as { code: number }).code).toBe(503);
      expect(vendor.received.length).toBe(served + 5);

      // Every post has failed by now (the two refusals above took longer than ioredis's retries): the five calls'
      // tab sits in the journal, owed, rewritten as one line per reference.
      const journaled = fs
        .readdirSync(path.join(journalDir, gw.h.services.config.store.prefix))
        .flatMap((f) =>
          fs.readFileSync(path.join(journalDir, gw.h.services.config.store.prefix, f), 'utf8').split('\n'),
        )
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { micros: number; reference: string });
      expect(journaled.reduce((sum, c) => sum + c.micros, 0)).toBe(5 * price);
      expect(new Set(journaled.map((c) => c.reference)).size).toBe(journaled.length);
      expect(gw.h.services.charges.byAccount(accountId)).toBe(5 * price);
      // What an operator alerts on: the flushes report what the store has not taken.
      const owedMetric = async () =>
        (await (await fetch(`${gw.base}/metrics`)).text()).match(
          /^genway_gateway_charges_owed_usd (\S+)$/m,
        )?.[1];
      await eventually(async () => expect(await owedMetric()).toBe(String((5 * price) / 1e6)));

      await redis.start();
      await eventually(async () => expect(gw.h.services.charges.byAccount(accountId)).toBe(0), 15_000);
      await eventually(async () => expect(await owedMetric()).toBe('0'));
      const all = await charges();
      expect(all.reduce((sum, c) => sum + c.amountMicros, 0)).toBe(6 * price);
      expect(all.length).toBe(1 + journaled.length);
      expect((await gw.h.services.accounts.describeAccount(accountId)).balanceUsd).toBe(
        (10_000_000 - 6 * price) / 1e6,
      );
      expect(gw.h.logs.text).toContain('posting gateway charges failed; kept and retried');
    } finally {
      await gw.close();
    }
  }, 60_000);

  test('a Genway killed with charges unposted: the next process on the same journal posts them, once', async () => {
    const config = path.join(journalDir, 'config.json');
    const vendorConfig = (name: keyof typeof VENDOR_KEYS) => ({
      baseUrl: vendor.url,
      apiKeys: VENDOR_KEYS[name],
    });
    fs.writeFileSync(
      config,
      JSON.stringify({
        store: { prefix: `genway-test:crash-charges:${process.pid}` },
        gateway: {
          prices: PRICES,
          chargeJournalDir: journalDir,
          openai: vendorConfig('openai'),
          anthropic: vendorConfig('anthropic'),
          gemini: vendorConfig('gemini'),
        },
      }),
    );
    const env = redisProcessEnv(redis.url, config);
    const admin = { authorization: `Bearer ${PROCESS_ADMIN}` };
    const first = startGenway(['serve', '--no-worker'], env);
    let second: ReturnType<typeof startGenway> | undefined;
    try {
      const base = `http://127.0.0.1:${await listeningPort(first)}`;
      const { accountId, key } = await adminAccount(base, 10);
      const balance = async (at: string) =>
        (
          (await (await fetch(`${at}/admin/v1/accounts/${accountId}`, { headers: admin })).json()) as {
            data: { balanceUsd: number };
          }
        ).data.balanceUsd;

      expect((await chat(base, key)).status).toBe(200);
      await eventually(async () => expect(await balance(base)).toBeLessThan(10));
      const price = Math.round((10 - (await balance(base))) * 1e6);

      const served = vendor.received.length;
      const release = holdCalls(vendor, 3);
      const calls = Array.from({ length: 3 }, () => chat(base, key));
      await untilReceived(vendor, served + 3);
      await redis.kill('SIGKILL');
      release();
      const answers = await Promise.all(calls);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      // Served means the client has the whole body (fetch resolves at the head).
      for (const a of answers) expect(await a.json()).toEqual(CHAT_JSON);

      first.kill('SIGKILL'); // charges unposted, in the journal only
      await first.exited;
      await redis.start();

      second = startGenway(['serve', '--no-worker'], env);
      const base2 = `http://127.0.0.1:${await listeningPort(second)}`;
      await eventually(async () => expect(await balance(base2)).toBe((10_000_000 - 4 * price) / 1e6), 15_000);
      await second.waitFor(/took over charges journaled by a stopped process/);
      // Nothing is posted twice: the balance stays put.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await balance(base2)).toBe((10_000_000 - 4 * price) / 1e6);
    } finally {
      first.kill('SIGKILL');
      second?.kill('SIGKILL');
    }
  }, 60_000);
});
