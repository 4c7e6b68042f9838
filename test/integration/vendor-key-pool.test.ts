import { settled } from '../helpers/eventually';
import { freePort, rawRequest, startGateway, type RunningGateway } from '../helpers/gateway';
import { defaultAnswer, MockVendor, type MockHandler, type Received } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';
import { dropPrefix, redisUrl, uniquePrefix } from '../helpers/redis';

/** Fast retries, long cooldowns (nothing comes back during a test), a quick shared-view refresh. */
const FAILOVER = {
  backoffMs: 1,
  maxBackoffMs: 100,
  cooldownMs: 600_000,
  failuresToCooldown: 3,
  refreshMs: 50,
};

const ALPHA = { id: 'alpha', key: 'sk-pool-alpha-secret' };
const BETA = { id: 'beta', key: 'sk-pool-beta-secret' };
const SECRETS = [ALPHA.key, BETA.key, 'sk-pool-main-secret', 'sk-pool-backup-secret', 'sk-pool-plain-secret'];

/** The vendor key a request went up with (OpenAI's Authorization: Bearer). */
const keyOf = (r: Received) => (r.headers.authorization ?? '').replace(/^Bearer /, '');

const json = (status: number, body: unknown, headers: Record<string, string> = {}): MockHandler => {
  return (_req, res) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
};
const limited = (who: string, retryAfter = '60') =>
  json(429, { error: { type: 'rate_limit', message: `${who} is limited` } }, { 'retry-after': retryAfter });
const broken = json(500, { error: { type: 'server_error', message: 'boom' } });
/** OpenAI's answer to a key it no longer takes: it names the key's last characters. */
const revoked = json(401, {
  error: {
    message: 'Incorrect API key provided: sk-pool-*****************cret. You can find your API key at ...',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  },
});

/** A mock vendor that answers by the vendor key it is called with (`answers`), else with the canned answers. */
function pooledVendor() {
  const answers = new Map<string, MockHandler>();
  const vendor = new MockVendor((req, res) => (answers.get(keyOf(req)) ?? defaultAnswer)(req, res));
  return { vendor, answers };
}

interface Mode {
  name: string;
  redis: boolean;
}
const MODES: Mode[] = [{ name: 'memory', redis: false }];
if (redisUrl) MODES.push({ name: 'redis', redis: true });

function metricValue(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    if (wanted.every((w) => labelText.split(',').includes(w)))
      return Number(line.slice(line.indexOf('}') + 1));
  }
  return undefined;
}

describe.each(MODES.map((m) => [m.name, m] as const))('vendor key pool (%s store)', (_name, mode) => {
  let vendor: MockVendor;
  let answers: Map<string, MockHandler>;
  let running: RunningGateway[] = [];
  let prefixes: string[] = [];

  beforeEach(async () => {
    ({ vendor, answers } = pooledVendor());
    await vendor.start();
  });
  afterEach(async () => {
    for (const gw of running) await gw.close();
    running = [];
    await Promise.all(prefixes.map(dropPrefix));
    prefixes = [];
    await vendor.stop();
  });

  /** A gateway whose OpenAI pool is `openai` (no plain `apiKeys` unless given), with a funded Genway key. */
  async function gateway(openai: Record<string, unknown>, prefix?: string) {
    if (mode.redis && !prefix) prefixes.push((prefix = uniquePrefix('pool')));
    const gw = await startGateway(vendor.url, {
      redis: mode.redis,
      prefix,
      gateway: { openai: { baseUrl: vendor.url, apiKeys: [], ...openai }, failover: FAILOVER },
    });
    running.push(gw);
    const { key } = await fundedKey(gw.h.services);
    return { gw, key };
  }

  const chat = (gw: RunningGateway, key: string, text = 'hello') =>
    rawRequest(`${gw.base}/v1/chat/completions`, {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: text }] }),
    });
  const metrics = (gw: RunningGateway) => gw.h.services.metrics.registry.metrics();
  const used = () => vendor.received.map((r) => keyOf(r));

  test.each([
    ['a 429 with retry-after', limited('alpha'), 'rate_limited', 50],
    // Genway put the key there: the vendor no longer takes it (revoked, rotated). The next key goes at once.
    ['a 401 (the vendor refuses the key)', revoked, 'key_rejected', 500],
  ] as const)(
    '%s is answered by the next key; the failed key cools and is skipped',
    async (_name, answer, outcome, cools) => {
      const { gw, key } = await gateway({ keys: [ALPHA, BETA] });
      answers.set(ALPHA.key, answer);

      const first = await chat(gw, key);
      expect(first.status).toBe(200);
      expect(used()).toEqual([ALPHA.key, BETA.key]);

      for (let i = 0; i < 3; i++) expect((await chat(gw, key)).status).toBe(200);
      expect(used()).toEqual([ALPHA.key, BETA.key, BETA.key, BETA.key, BETA.key]);

      const text = await metrics(gw);
      const tries = 'genway_gateway_vendor_key_attempts_total';
      expect(metricValue(text, tries, { vendor: 'openai', key_id: 'alpha', outcome })).toBe(1);
      expect(metricValue(text, tries, { vendor: 'openai', key_id: 'beta', outcome: 'ok' })).toBe(4);
      const cooldown = metricValue(text, 'genway_gateway_vendor_key_cooldown_seconds', {
        vendor: 'openai',
        key_id: 'alpha',
      });
      expect(cooldown).toBeGreaterThan(cools);
      for (const secret of SECRETS) expect(text).not.toContain(secret);
    },
  );

  test('a 500 is retried on the next key; one 5xx does not cool a key', async () => {
    const { gw, key } = await gateway({ keys: [ALPHA, BETA] });
    let failures = 1;
    answers.set(ALPHA.key, (req, res) => (failures-- > 0 ? broken : defaultAnswer)(req, res));

    expect((await chat(gw, key)).status).toBe(200);
    expect(used()).toEqual([ALPHA.key, BETA.key]);
    // Smooth weighted round robin goes on: beta, then alpha again (not cooling after a single 500).
    expect((await chat(gw, key)).status).toBe(200);
    expect((await chat(gw, key)).status).toBe(200);
    expect(used()).toEqual([ALPHA.key, BETA.key, BETA.key, ALPHA.key]);
    const text = await metrics(gw);
    expect(
      metricValue(text, 'genway_gateway_vendor_key_attempts_total', {
        vendor: 'openai',
        key_id: 'alpha',
        outcome: 'server_error',
      }),
    ).toBe(1);
  });

  test('a connect error on the base URL moves to the fallback base URL, and the dead origin cools', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const { gw, key } = await gateway({
      baseUrl: dead,
      keys: [{ id: 'main', key: 'sk-pool-main-secret' }],
      fallbacks: [{ baseUrl: vendor.url, keys: [{ id: 'backup', key: 'sk-pool-backup-secret' }] }],
    });
    expect((await chat(gw, key)).status).toBe(200);
    expect((await chat(gw, key)).status).toBe(200);
    expect(used()).toEqual(['sk-pool-backup-secret', 'sk-pool-backup-secret']);
    const text = await metrics(gw);
    const tries = 'genway_gateway_vendor_key_attempts_total';
    // The second call skipped the cooling origin without trying it.
    expect(metricValue(text, tries, { vendor: 'openai', key_id: 'main', outcome: 'connect_error' })).toBe(1);
    expect(metricValue(text, tries, { vendor: 'openai', key_id: 'backup', outcome: 'ok' })).toBe(2);
  });

  test('weights are shares of a smooth weighted round robin: exact counts, deterministic order', async () => {
    const { gw, key } = await gateway({
      keys: [
        { id: 'heavy', key: 'sk-pool-heavy', weight: 3 },
        { id: 'light', key: 'sk-pool-light', weight: 1 },
      ],
    });
    for (let i = 0; i < 8; i++) expect((await chat(gw, key)).status).toBe(200);
    const order = used().map((k) => k.replace('sk-pool-', ''));
    expect(order).toEqual(['heavy', 'heavy', 'light', 'heavy', 'heavy', 'heavy', 'light', 'heavy']);
  });

  test('a response that sent its head and then broke is not retried', async () => {
    const { gw, key } = await gateway({ keys: [ALPHA, BETA] });
    answers.set(ALPHA.key, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"id":"chatcmpl-cut","choices":[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const outcome = await chat(gw, key, 'first').then(
      (r) => `status ${r.status}`,
      () => 'cut',
    );
    expect(outcome).toBe('cut');
    await vendor.received[0].closed;
    // A later call, as a barrier: a retry of the first would have reached the vendor before it.
    expect((await chat(gw, key, 'second')).status).toBe(200);
    const firsts = vendor.received.filter((r) => r.body.toString().includes('first'));
    expect(firsts.map(keyOf)).toEqual([ALPHA.key]);
  });

  test("every key failing: the client gets the vendor's last answer as it is", async () => {
    const { gw, key } = await gateway({ keys: [ALPHA, BETA] });
    answers.set(ALPHA.key, limited('alpha'));
    answers.set(BETA.key, limited('beta', '30'));
    const r = await chat(gw, key);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('30');
    expect(JSON.parse(r.body.toString())).toEqual({
      error: { type: 'rate_limit', message: 'beta is limited' },
    });
    expect(used()).toEqual([ALPHA.key, BETA.key]);

    // Both cool now: the next call still gets a vendor answer (the key back first), not one Genway makes up.
    const again = await chat(gw, key);
    expect(again.status).toBe(429);
    expect(used()).toHaveLength(3);
  });

  test('a held 429 is the answer when the next try cannot connect', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const { gw, key } = await gateway({
      keys: [ALPHA],
      fallbacks: [{ baseUrl: dead, keys: [{ id: 'backup', key: 'sk-pool-backup-secret' }] }],
    });
    answers.set(ALPHA.key, limited('alpha', '5'));
    const r = await chat(gw, key);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('5');
    expect(JSON.parse(r.body.toString()).error.message).toBe('alpha is limited');
  });

  test("no key left that the vendor takes: Genway's 502 in the vendor's shape, never the vendor's 401", async () => {
    // One key (no failover at all), then two refused, then a refusal after a key that was rate limited.
    for (const [keys, refused, status] of [
      [[ALPHA], [ALPHA], 502],
      [[ALPHA, BETA], [ALPHA, BETA], 502],
      [[ALPHA, BETA], [BETA], 429],
    ] as const) {
      const { gw, key } = await gateway({ keys });
      vendor.received.length = 0;
      answers.clear();
      if (status === 429) answers.set(ALPHA.key, limited('alpha', '0'));
      for (const k of refused) answers.set(k.key, revoked);
      const r = await chat(gw, key);
      expect(used()).toEqual(keys.map((k) => k.key));
      expect(r.status).toBe(status);
      const body = r.body.toString();
      if (status === 429) {
        // The answer given up for the refused key's is the client's: the vendor's own 429.
        expect(JSON.parse(body).error.message).toBe('alpha is limited');
        continue;
      }
      const last = keys[keys.length - 1].id;
      expect(JSON.parse(body)).toEqual({
        error: {
          message: `Upstream openai refused Genway's vendor key ${last} (HTTP 401); the operator must replace it`,
          type: 'server_error',
          param: null,
          code: 'upstream_unreachable',
        },
      });
      expect(r.headers['genway-request-id']).toBeTruthy();
      expect(r.headers['x-should-retry']).toBe('false'); // every key was tried: an SDK's retries would only wait
      // Nothing of the vendor's answer: not its message, nor the part of Genway's key OpenAI's names.
      expect(body).not.toContain('Incorrect API key');
      expect(body).not.toContain('cret');
    }
  });

  test('a pinned object keeps the key that made it: no failover, even while that key cools', async () => {
    const { gw, key } = await gateway({ keys: [ALPHA, BETA] });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // Made through beta after alpha failed: remembered with the key that served it.
    answers.set(ALPHA.key, broken);
    const created = await rawRequest(`${gw.base}/v1/responses`, {
      headers,
      body: JSON.stringify({ model: 'gpt-test', input: 'hi' }),
    });
    expect(created.status).toBe(200);
    expect(used()).toEqual([ALPHA.key, BETA.key]);
    answers.delete(ALPHA.key);

    answers.set(BETA.key, limited('beta'));
    const refused = await rawRequest(`${gw.base}/v1/responses/resp_1`, { method: 'GET', headers });
    expect(refused.status).toBe(429);
    expect(used().slice(2)).toEqual([BETA.key]);

    answers.delete(BETA.key);
    const read = await rawRequest(`${gw.base}/v1/responses/resp_1`, { method: 'GET', headers });
    expect(read.status).toBe(200);
    expect(used().slice(3)).toEqual([BETA.key]);
  });

  test('metrics and logs name keys by id (configured or derived), never the key', async () => {
    const { gw, key } = await gateway({ apiKeys: ['sk-pool-plain-secret'], keys: [ALPHA] });
    answers.set('sk-pool-plain-secret', limited('plain'));
    expect((await chat(gw, key)).status).toBe(200);
    const text = await metrics(gw);
    const derived = /key_id="(k-[0-9a-f]{12})",outcome="rate_limited"/.exec(text);
    expect(derived).not.toBeNull();
    expect(text).toContain('key_id="alpha"');
    const logs = gw.h.logs.text;
    expect(logs).toContain('vendor key cooling down');
    expect(logs).toContain(derived![1]);
    for (const secret of SECRETS) {
      expect(text).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });

  if (mode.redis) {
    test('two replicas: a key that failed on one is skipped by the other without trying it', async () => {
      const prefix = uniquePrefix('pool-replicas');
      prefixes.push(prefix);
      const a = await gateway({ keys: [ALPHA, BETA] }, prefix);
      const b = await gateway({ keys: [ALPHA, BETA] }, prefix);
      answers.set(ALPHA.key, limited('alpha'));

      expect((await chat(a.gw, a.key)).status).toBe(200);
      expect(used()).toEqual([ALPHA.key, BETA.key]);

      // Replica B learns of the cooldown in the background (its refresh interval), not from a request.
      const cooling = async () =>
        (metricValue(await metrics(b.gw), 'genway_gateway_vendor_key_cooldown_seconds', {
          vendor: 'openai',
          key_id: 'alpha',
        }) ?? 0) > 0;
      expect(await settled(cooling, true)).toBe(true);

      // B's rotation starts with alpha: it goes straight to beta.
      expect((await chat(b.gw, b.key)).status).toBe(200);
      expect((await chat(b.gw, b.key)).status).toBe(200);
      expect(used()).toEqual([ALPHA.key, BETA.key, BETA.key, BETA.key]);
      const tried = metricValue(await metrics(b.gw), 'genway_gateway_vendor_key_attempts_total', {
        vendor: 'openai',
        key_id: 'alpha',
        outcome: 'rate_limited',
      });
      expect(tried).toBeUndefined();
    });
  }
});
