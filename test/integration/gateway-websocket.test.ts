import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket } from 'undici';
import { FrameReader, serverFrame } from '../../src/gateway/websocket';
import { settled } from '../helpers/eventually';
import { startGateway, VENDOR_KEYS, type RunningGateway } from '../helpers/gateway';
import { RESPONSE_JSON } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';

/** What the vendor's WebSocket endpoint received: the upgrade request and each client message. */
interface Upgrade {
  url: string;
  headers: http.IncomingHttpHeaders;
  messages: unknown[];
  /** Genway closed its half of the connection. */
  ended?: boolean;
}

/**
 * The Responses API's WebSocket mode on loopback: accepts the upgrade, and answers each `response.create` with the
 * events a streamed response has (created, two text deltas, completed with usage).
 */
class MockWebSocketVendor {
  readonly upgrades: Upgrade[] = [];
  private readonly sockets = new Set<Duplex>();
  private readonly server = http.createServer((_req, res) => res.writeHead(426).end());
  url = '';
  /** When set, the next upgrade is refused with this status and body. */
  refuseNext: { status: number; body: string } | null = null;

  async start(): Promise<this> {
    this.server.on('upgrade', (req, socket: Duplex) => this.accept(req, socket));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private accept(req: http.IncomingMessage, socket: Duplex): void {
    const upgrade: Upgrade = { url: req.url!, headers: req.headers, messages: [] };
    this.upgrades.push(upgrade);
    if (this.refuseNext) {
      const { status, body } = this.refuseNext;
      this.refuseNext = null;
      socket.end(
        // Chunked, with a header of its own hop named in Connection: neither goes on as such.
        `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n` +
          `connection: X-Vendor-Hop\r\nx-vendor-hop: vendor-side\r\n\r\n` +
          `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
      return;
    }
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('end', () => (upgrade.ended = true));
    const accept = createHash('sha1')
      .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nx-request-id: ws-vendor-req\r\nConnection: X-Vendor-Hop\r\nX-Vendor-Hop: vendor-side\r\n\r\n`,
    );
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.feed(chunk)) {
        if (frame.opcode === 8) return void socket.end(serverFrame(8, frame.payload));
        if (frame.opcode !== 1) continue;
        const message = JSON.parse(frame.payload.toString()) as { type: string; model?: string };
        upgrade.messages.push(message);
        if (message.type !== 'response.create') continue;
        if (message.model === 'no-such-model') {
          // The vendor's refusal of a turn: an error event, no response and no usage.
          const error = { type: 'invalid_request_error', code: 'model_not_found', message: 'no such model' };
          socket.write(serverFrame(1, Buffer.from(JSON.stringify({ type: 'error', status: 404, error }))));
          continue;
        }
        const response = { ...RESPONSE_JSON, model: message.model };
        const events = [
          {
            type: 'response.created',
            sequence_number: 0,
            response: { ...response, status: 'in_progress', usage: null },
          },
          { type: 'response.output_text.delta', sequence_number: 1, delta: 'Hello' },
          { type: 'response.output_text.delta', sequence_number: 2, delta: ' there' },
          { type: 'response.completed', sequence_number: 3, response },
        ];
        for (const e of events) socket.write(serverFrame(1, Buffer.from(JSON.stringify(e))));
      }
    });
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** A client connection that collects every message it receives. */
async function connect(url: string, key: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers: { ...headers, authorization: `Bearer ${key}` } });
  const received: { type: string; [k: string]: unknown }[] = [];
  const waiters: (() => void)[] = [];
  ws.addEventListener('message', (e) => {
    received.push(JSON.parse(String(e.data)) as { type: string });
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('websocket error')));
  });
  /** Resolves once `count` messages have arrived in all. */
  const until = async (count: number) => {
    while (received.length < count) await new Promise<void>((r) => waiters.push(r));
    return received.slice(0, count);
  };
  return { ws, received, until, closed };
}

/** A raw upgrade request: the HTTP answer Genway gives when it refuses. */
function rawUpgrade(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = http.request(url, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          ...headers,
        },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve({ status: 101, headers: res.headers, body: '' });
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('LLM gateway: the Responses WebSocket mode', () => {
  let vendor: MockWebSocketVendor;
  let gw: RunningGateway;
  beforeAll(async () => {
    vendor = await new MockWebSocketVendor().start();
    // One priced model, for the case-variant check every key gets on a priced call.
    const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
    gw = await startGateway(vendor.url, { gateway: { prices: { 'gpt-ws-priced': price } } });
  });
  afterAll(async () => {
    await gw.close();
    await vendor.stop();
  });
  const wsUrl = (path = '/v1/responses') => `${gw.base.replace('http', 'ws')}${path}`;

  test('a turn: the upgrade reaches the vendor with its key, events come back in order, usage is metered', async () => {
    const { key, keyId } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'Hi' }));
    const events = await client.until(4);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.completed',
    ]);
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.url).toBe('/v1/responses');
    expect(upgrade.headers.authorization).toBe(`Bearer ${VENDOR_KEYS.openai[0]}`);
    expect(JSON.stringify(upgrade.headers)).not.toContain(key);
    // Compression is never negotiated, so Genway can read the frames.
    expect(upgrade.headers['sec-websocket-extensions']).toBeUndefined();
    expect(upgrade.messages).toEqual([{ type: 'response.create', model: 'gpt-ws', input: 'Hi' }]);
    const expected = {
      'gpt-ws': { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);

    // A second response on the same connection is a second metered call.
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'Again' }));
    await client.until(8);
    const twice = {
      'gpt-ws': { requests: 2, input: 64, output: 18, cacheRead: 16, cacheWrite: 0, reasoning: 4 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), twice)).toEqual(twice);
    client.ws.close();
  });

  test("hop-by-hop headers of the client's upgrade stay with Genway; the handshake's own pass", async () => {
    const { key } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key, {
      'proxy-authorization': 'Basic Y2xpZW50OnNlY3JldA==',
      'x-client-trace': 't-1',
    });
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.headers['proxy-authorization']).toBeUndefined(); // a credential for the client's proxy
    expect(upgrade.headers['x-client-trace']).toBe('t-1');
    expect(upgrade.headers.upgrade).toBe('websocket');
    expect(upgrade.headers.connection?.toLowerCase()).toContain('upgrade');
    client.ws.close();
  });

  test('headers either side names in its Connection stay on that hop', async () => {
    const { key } = await fundedKey(gw.h.services);
    const res = await rawUpgrade(`${gw.base}/v1/responses`, {
      authorization: `Bearer ${key}`,
      connection: 'Upgrade, X-Client-Hop',
      'x-client-hop': 'client-side',
      'x-client-trace': 't-2',
    });
    expect(res.status).toBe(101);
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.headers['x-client-trace']).toBe('t-2');
    expect(upgrade.headers['x-client-hop']).toBeUndefined();
    expect(upgrade.headers.connection).toBe('Upgrade');
    expect(upgrade.headers.upgrade).toBe('websocket');
    // The vendor's 101 named X-Vendor-Hop in a Connection of its own: the client gets neither.
    expect(res.headers['x-vendor-hop']).toBeUndefined();
    expect(res.headers.connection).toBe('Upgrade');
    expect(res.headers.upgrade).toBe('websocket');
    expect(res.headers['x-request-id']).toBe('ws-vendor-req');
  });

  test('a missing or wrong key is refused before any upgrade, in the vendor shape, not to be retried', async () => {
    const before = vendor.upgrades.length;
    for (const headers of [{}, { authorization: `Bearer gwk_${'Z'.repeat(43)}` }] as Record<
      string,
      string
    >[]) {
      const res = await rawUpgrade(`${gw.base}/v1/responses`, headers);
      expect(res.status).toBe(401);
      expect(res.headers['x-should-retry']).toBe('false');
      expect(res.headers['genway-request-id']).toBeTruthy();
      expect(JSON.parse(res.body).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    }
    expect(vendor.upgrades.length).toBe(before);
  });

  test('an upgrade on a path without a WebSocket mode is a 404', async () => {
    const { key } = await fundedKey(gw.h.services);
    const res = await rawUpgrade(`${gw.base}/v1/chat/completions`, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body).error.code).toBe('not_found');
  });

  test('the vendor refusing the upgrade: its answer reaches the client unchanged', async () => {
    const { key } = await fundedKey(gw.h.services);
    vendor.refuseNext = { status: 403, body: '{"error":{"message":"no ws for you","type":"x"}}' };
    const res = await rawUpgrade(`${gw.base}/v1/responses`, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(403);
    expect(res.body).toBe('{"error":{"message":"no ws for you","type":"x"}}');
    expect(res.headers['content-length']).toBe(String(res.body.length));
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(res.headers['x-vendor-hop']).toBeUndefined();
    expect(res.headers['content-type']).toBe('application/json');
  });

  test("the vendor refusing Genway's own key (401): Genway's 502 in the vendor's shape, not the vendor's answer", async () => {
    const { key } = await fundedKey(gw.h.services);
    vendor.refuseNext = {
      status: 401,
      body: '{"error":{"message":"Incorrect API key provided: sk-***-abcd","type":"invalid_request_error"}}',
    };
    const res = await rawUpgrade(`${gw.base}/v1/responses`, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(502);
    expect(res.headers['genway-request-id']).toBeTruthy();
    expect(res.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(res.body).error.message).toMatch(
      /^Upstream openai refused Genway's vendor key k-[0-9a-f]{12} \(HTTP 401\); the operator must replace it$/,
    );
    expect(res.body).not.toContain('abcd');
  });

  test('a key with an allow-list: a response for another model is refused on the connection, not forwarded', async () => {
    const { key } = await fundedKey(gw.h.services, 10, { models: ['gpt-ws'] });
    const client = await connect(wsUrl(), key);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-forbidden', input: 'x' }));
    const [refusal] = await client.until(1);
    expect(refusal).toMatchObject({
      type: 'error',
      status: 403,
      error: { type: 'invalid_request_error', code: 'model_not_found' },
    });
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'x' }));
    const events = await client.until(5);
    expect(events[4].type).toBe('response.completed');
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.messages).toEqual([{ type: 'response.create', model: 'gpt-ws', input: 'x' }]);
    client.ws.close();
  });

  test('a key with an allow-list: escapes, a second model under response, a MODEL field and a model on another event are all checked', async () => {
    const { key } = await fundedKey(gw.h.services, 10, { models: ['gpt-ws'] });
    const client = await connect(wsUrl(), key);
    const refusals = [
      // JSON escapes decode to the same type and name: the vendor reads response.create and model.
      ['{"type":"response\\u002ecreate","model":"gpt-forbidden","input":"x"}', 403, 'model_not_found'],
      ['{"type":"response.create","mod\\u0065l":"gpt-forbidden","input":"x"}', 403, 'model_not_found'],
      // Both shapes of the event at once: each model named is checked, not only the first.
      [
        '{"type":"response.create","model":"gpt-ws","response":{"model":"gpt-forbidden"}}',
        403,
        'model_not_found',
      ],
      // A case-blind back end would run MODEL.
      ['{"type":"response.create","model":"gpt-ws","MODEL":"gpt-forbidden"}', 400, undefined],
      ['{"type":"response.create","response":{"model":"gpt-ws","Model":"gpt-forbidden"}}', 400, undefined],
      // Not a response, but a model the vendor may act on later.
      ['{"type":"session.update","model":"gpt-forbidden"}', 403, 'model_not_found'],
    ] as const;
    for (const [i, [message, status, code]] of refusals.entries()) {
      client.ws.send(message);
      const refusal = (await client.until(i + 1))[i];
      expect(refusal).toMatchObject({ type: 'error', status, error: { type: 'invalid_request_error' } });
      if (code) expect(refusal).toMatchObject({ error: { code } });
      else
        expect((refusal.error as { message: string }).message).toMatch(
          /^(response\.)?(MODEL|Model): a second model field/,
        );
    }
    // The connection stays usable, and only the allowed response reached the vendor.
    client.ws.send(JSON.stringify({ type: 'session.update', model: 'gpt-ws' }));
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'y' }));
    const events = await client.until(refusals.length + 4);
    expect(events[events.length - 1].type).toBe('response.completed');
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.messages).toEqual([
      { type: 'session.update', model: 'gpt-ws' },
      { type: 'response.create', model: 'gpt-ws', input: 'y' },
    ]);
    client.ws.close();
  });

  test('a key without an allow-list: escaped and other-case fields pass to the vendor as sent', async () => {
    const { key } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send('{"type":"response\\u002ecreate","model":"gpt-ws","MODEL":"other","input":"x"}');
    expect((await client.until(4))[3].type).toBe('response.completed');
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(upgrade.messages).toEqual([
      { type: 'response.create', model: 'gpt-ws', MODEL: 'other', input: 'x' },
    ]);
    client.ws.close();
  });

  test("a priced model with MODEL beside it is refused for a key without an allow-list too (its price is the checked model's)", async () => {
    const { key } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send('{"type":"response.create","model":"gpt-ws-priced","MODEL":"gpt-dear","input":"x"}');
    const [refusal] = await client.until(1);
    expect(refusal).toMatchObject({ type: 'error', status: 400 });
    expect((refusal.error as { message: string }).message).toMatch(
      /^MODEL: a second model field spelled in other case/,
    );
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws-priced', input: 'y' }));
    expect((await client.until(5))[4].type).toBe('response.completed');
    expect(vendor.upgrades[vendor.upgrades.length - 1].messages).toEqual([
      { type: 'response.create', model: 'gpt-ws-priced', input: 'y' },
    ]);
    client.ws.close();
  });

  test("a turn the vendor refuses (an error event, no usage) does not shift the next turn's price onto its model", async () => {
    const turn = (model: string) => JSON.stringify({ type: 'response.create', model, input: 'x' });
    /** What an account's turns cost, from its balance (a read posts what it owes). */
    const spent = async (turns: string[], events: number) => {
      const { key, accountId } = await fundedKey(gw.h.services, 10);
      const client = await connect(wsUrl(), key);
      for (const t of turns) client.ws.send(t);
      await client.until(events);
      client.ws.close();
      return 10 - (await gw.h.services.accounts.describeAccount(accountId)).balanceUsd;
    };
    const alone = await spent([turn('gpt-ws-priced')], 4);
    expect(alone).toBeGreaterThan(0);
    expect(await spent([turn('no-such-model'), turn('gpt-ws-priced')], 5)).toBeCloseTo(alone, 9);
  });

  test("a response made on the connection is its account's: another account's turn naming it is a 404, so is its GET", async () => {
    const owner = await fundedKey(gw.h.services);
    const a = await connect(wsUrl(), owner.key);
    a.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'secret plans' }));
    await a.until(4);
    a.ws.close();
    const id = RESPONSE_JSON.id;
    const recorded = async () =>
      (await gw.h.services.store.vendorObjects.recall('openai', [id]))[0]?.accountId ?? null;
    expect(await settled(recorded, owner.accountId)).toBe(owner.accountId);

    const other = await fundedKey(gw.h.services);
    const b = await connect(wsUrl(), other.key);
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1]; // b's
    // Escaped, under the event's nested shape: decoded, it names the owner's response.
    b.ws.send(
      `{"type":"response.create","response":{"model":"gpt-ws","previous\\u005fresponse_id":"${id}"}}`,
    );
    const [refusal] = await b.until(1);
    expect(refusal).toMatchObject({ type: 'error', status: 404 });
    expect((refusal.error as { message: string }).message).toBe(`No such openai object: ${id}`);
    expect(upgrade.messages).toEqual([]); // the turn never reached the vendor
    b.ws.close();
    const read = await fetch(`${gw.base}/v1/responses/${id}`, {
      headers: { authorization: `Bearer ${other.key}` },
    });
    expect(read.status).toBe(404);
  });

  test('a key revoked while connected: its next response is refused and the connection closed (1008)', async () => {
    const { key, keyId } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'x' }));
    await client.until(4);
    await gw.h.services.accounts.revokeKey(keyId);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'x' }));
    const events = await client.until(5);
    expect(events[4]).toMatchObject({ type: 'error', status: 401 });
    expect((await client.closed).code).toBe(1008);
    expect(vendor.upgrades[vendor.upgrades.length - 1].messages).toHaveLength(1);
  });

  test('the vendor mount /openai reaches the same WebSocket mode', async () => {
    const { key } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl('/openai/v1/responses'), key);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'x' }));
    expect((await client.until(4))[3].type).toBe('response.completed');
    expect(vendor.upgrades[vendor.upgrades.length - 1].url).toBe('/v1/responses');
    client.ws.close();
  });

  test('a client gone without a close frame: Genway closes its half to the client and to the vendor', async () => {
    const { key } = await fundedKey(gw.h.services);
    const socket = await new Promise<Duplex>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/responses`, {
        headers: {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          authorization: `Bearer ${key}`,
        },
      });
      req.on('upgrade', (_res, s: Duplex) => resolve(s));
      req.on('response', (res) => reject(new Error(`not upgraded: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.resume();
    socket.end();
    await closed; // Genway ended its half: the connection is not held open until the idle timeout
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(await settled(() => upgrade.ended, true)).toBe(true);
  });
});
