import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket } from 'undici';
import { FrameReader, serverFrame } from '../../src/gateway/websocket';
import { settled } from '../helpers/eventually';
import { startGateway, VENDOR_KEYS, type RunningGateway } from '../helpers/gateway';
import { RESPONSE_JSON } from '../helpers/mock-vendor';
import { chargedMicros, fundedKey } from '../helpers/services';

/** What the vendor's WebSocket endpoint received: the upgrade request and each client message. */
interface Upgrade {
  url: string;
  headers: http.IncomingHttpHeaders;
  messages: unknown[];
  /** Genway closed its half of the connection. */
  ended?: boolean;
  /** The usage of a `long-end` response left the vendor (its last bytes went out to Genway). */
  usageSent?: boolean;
}

/** Models the mock vendor names in its events as the dated snapshot the asked name points at. */
const ANSWERED_AS: Record<string, string> = { 'gpt-ws-dated': 'gpt-ws-dated-2025-01-01' };

/**
 * The Responses API's WebSocket mode on loopback: accepts the upgrade, and answers each `response.create` with the
 * events a streamed response has (created, two text deltas, completed with usage). It refuses a turn with an error
 * event (no response) for `no-such-model` or a `previous_response_id` it did not make, and fails one whose input is
 * `fail` (created, then failed without usage).
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
    // What the vendor says of Genway's own account, session and quota with it, on a refusal and on a 101 alike.
    const session =
      'openai-organization: org-genway\r\nopenai-project: proj_genway\r\n' +
      'set-cookie: __cf_bm=vendor-session; path=/; domain=.vendor.example; HttpOnly\r\n' +
      'x-ratelimit-remaining-requests: 9999\r\nx-ratelimit-limit-tokens: 150000\r\n';
    this.upgrades.push(upgrade);
    if (this.refuseNext) {
      const { status, body } = this.refuseNext;
      this.refuseNext = null;
      socket.end(
        // Chunked, with a header of its own hop named in Connection: neither goes on as such.
        `HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n` +
          `connection: X-Vendor-Hop\r\nx-vendor-hop: vendor-side\r\n${session}\r\n` +
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
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nx-request-id: ws-vendor-req\r\nConnection: X-Vendor-Hop\r\nX-Vendor-Hop: vendor-side\r\n${session}\r\n`,
    );
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.feed(chunk)) {
        if (frame.opcode === 8) return void socket.end(serverFrame(8, frame.payload));
        if (frame.opcode !== 1) continue;
        const message = JSON.parse(frame.payload.toString()) as {
          type: string;
          model?: string;
          input?: unknown;
          previous_response_id?: string;
        };
        upgrade.messages.push(message);
        if (message.type !== 'response.create') continue;
        // The vendor's refusal of a turn: an error event, no response and no usage.
        const refusal =
          message.model === 'no-such-model'
            ? {
                status: 404,
                error: { type: 'invalid_request_error', code: 'model_not_found', message: 'no such model' },
              }
            : message.previous_response_id !== undefined && message.previous_response_id !== RESPONSE_JSON.id
              ? {
                  status: 400,
                  error: {
                    type: 'invalid_request_error',
                    code: 'previous_response_not_found',
                    message: `Previous response with id '${message.previous_response_id}' not found.`,
                    param: 'previous_response_id',
                  },
                }
              : undefined;
        if (refusal) {
          socket.write(serverFrame(1, Buffer.from(JSON.stringify({ type: 'error', ...refusal }))));
          continue;
        }
        const model = (message.model && ANSWERED_AS[message.model]) ?? message.model;
        const response = { ...RESPONSE_JSON, model };
        const created = {
          type: 'response.created',
          sequence_number: 0,
          response: { ...response, status: 'in_progress', usage: null },
        };
        const failed = {
          type: 'response.failed',
          sequence_number: 1,
          response: {
            ...response,
            status: 'failed',
            output: [],
            usage: null,
            error: { code: 'server_error', message: 'The model failed' },
          },
        };
        const events =
          message.input === 'fail'
            ? [created, failed]
            : [
                created,
                { type: 'response.output_text.delta', sequence_number: 1, delta: 'Hello' },
                { type: 'response.output_text.delta', sequence_number: 2, delta: ' there' },
                { type: 'response.completed', sequence_number: 3, response },
              ];
        if (message.input === 'slow-end') {
          // The answer out at once, its usage 300 ms later (a close frame in between ends the socket first).
          const done = { type: 'response.output_item.done', sequence_number: 3, item: { type: 'message' } };
          for (const e of [...events.slice(0, -1), done])
            socket.write(serverFrame(1, Buffer.from(JSON.stringify(e))));
          setTimeout(() => {
            if (!socket.writableEnded)
              socket.write(serverFrame(1, Buffer.from(JSON.stringify(events.at(-1)))));
          }, 300);
          continue;
        }
        if (message.input === 'long-end') {
          // The answer out, then 32 MB more (long deltas) before its usage: more than the sockets between hold (about
          // 12 MB on loopback, where the receive buffer Genway reads the vendor through grows while it reads).
          const done = { type: 'response.output_item.done', sequence_number: 1, item: { type: 'message' } };
          const padding = Array.from({ length: 32 }, (_, i) => ({
            type: 'response.output_text.delta',
            sequence_number: 2 + i,
            delta: 'x'.repeat(1 << 20),
          }));
          socket.on('error', () => undefined); // a reset, where Genway lets it go with bytes unread
          for (const e of [created, done, ...padding])
            socket.write(serverFrame(1, Buffer.from(JSON.stringify(e))));
          const completed = {
            type: 'response.completed',
            sequence_number: 2 + padding.length,
            response: { ...response, usage: { input_tokens: 3000, output_tokens: 700, total_tokens: 3700 } },
          };
          socket.write(serverFrame(1, Buffer.from(JSON.stringify(completed))), (err) => {
            if (!err) upgrade.usageSent = true;
          });
          continue;
        }
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
/** A WebSocket upgrade through Genway as raw bytes: the socket, and what came after the 101 (rejects on no upgrade). */
function upgradedSocket(url: string, key: string): Promise<{ socket: Duplex; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: { ...UPGRADE_HEADERS, authorization: `Bearer ${key}` } });
    req.on('upgrade', (_res, socket: Duplex, head: Buffer) => resolve({ socket, head }));
    req.on('response', (res) => reject(new Error(`not upgraded: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

/** What a client sends to ask for the WebSocket upgrade. */
const UPGRADE_HEADERS = {
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

function rawUpgrade(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = http.request(url, { headers: { ...UPGRADE_HEADERS, ...headers } });
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
    // Priced models: for the case-variant check every key gets on a priced call, and for the order of turns and
    // their prices (a snapshot priced apart, which a turn asking its undated name does not pay).
    const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 1 };
    const prices = {
      'gpt-ws-priced': price,
      'gpt-ws-dated': price,
      'gpt-ws-dated-2025-01-01': { inputPerMTokUsd: 4, outputPerMTokUsd: 4 },
    };
    gw = await startGateway(vendor.url, { gateway: { prices } });
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

  test("a client that closes once a response's answer is out still pays for it: its close waits for the usage", async () => {
    const { key, keyId } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send(JSON.stringify({ type: 'response.create', model: 'gpt-ws', input: 'slow-end' }));
    expect((await client.until(4)).map((e) => e.type)).toEqual([
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_item.done',
    ]);
    client.ws.close();
    const expected = {
      'gpt-ws': { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    await client.closed;
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

  test("Genway's vendor session stays with Genway: the client's cookies never reach the vendor, the vendor's account headers, cookies and quota never reach the client (101 and refusal)", async () => {
    const { key } = await fundedKey(gw.h.services);
    const session = [
      'openai-organization',
      'openai-project',
      'set-cookie',
      'x-ratelimit-remaining-requests',
      'x-ratelimit-limit-tokens',
    ];
    const upgraded = await rawUpgrade(`${gw.base}/v1/responses`, {
      authorization: `Bearer ${key}`,
      cookie: 'genway_console=client-session',
    });
    expect(upgraded.status).toBe(101);
    expect(vendor.upgrades[vendor.upgrades.length - 1].headers.cookie).toBeUndefined();
    expect(upgraded.headers['x-request-id']).toBe('ws-vendor-req'); // the vendor's other headers pass
    for (const name of session) expect(upgraded.headers[name]).toBeUndefined();

    vendor.refuseNext = { status: 403, body: '{"error":{"message":"no ws for you","type":"x"}}' };
    const refused = await rawUpgrade(`${gw.base}/v1/responses`, {
      authorization: `Bearer ${key}`,
      cookie: 'genway_console=client-session',
    });
    expect(refused.status).toBe(403);
    expect(vendor.upgrades[vendor.upgrades.length - 1].headers.cookie).toBeUndefined();
    expect(refused.headers['content-type']).toBe('application/json');
    for (const name of session) expect(refused.headers[name]).toBeUndefined();
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

  test('a priced turn asking for a service tier with no price is refused on the connection, in either shape of the event', async () => {
    const { key } = await fundedKey(gw.h.services);
    const client = await connect(wsUrl(), key);
    client.ws.send(
      JSON.stringify({
        type: 'response.create',
        model: 'gpt-ws-priced',
        service_tier: 'priority',
        input: 'x',
      }),
    );
    client.ws.send(
      JSON.stringify({
        type: 'response.create',
        response: { model: 'gpt-ws-priced', service_tier: 'priority', input: 'x' },
      }),
    );
    const refusals = await client.until(2);
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({ type: 'error', status: 403 });
      expect((refusal.error as { message: string }).message).toMatch(
        /^service_tier: "priority" has no price for this model/,
      );
    }
    // Flex has the vendor's price (half); an unpriced model takes any tier.
    client.ws.send(
      JSON.stringify({ type: 'response.create', model: 'gpt-ws-priced', service_tier: 'flex', input: 'y' }),
    );
    client.ws.send(
      JSON.stringify({ type: 'response.create', model: 'gpt-ws', service_tier: 'priority', input: 'z' }),
    );
    await client.until(10);
    expect(vendor.upgrades[vendor.upgrades.length - 1].messages).toEqual([
      { type: 'response.create', model: 'gpt-ws-priced', service_tier: 'flex', input: 'y' },
      { type: 'response.create', model: 'gpt-ws', service_tier: 'priority', input: 'z' },
    ]);
    client.ws.close();
  });

  describe("a turn that reports no usage does not shift a later turn's price or name onto its model", () => {
    const turn = (model: string, more: Record<string, unknown> = {}) =>
      JSON.stringify({ type: 'response.create', model, input: 'x', ...more });
    const oneCall = { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 };
    /** What an account's turns cost (from its balance: a read posts what it owes), and its usage by model. */
    const run = async (turns: string[], events: number, expectedUsage: unknown) => {
      const { key, keyId, accountId } = await fundedKey(gw.h.services, 10);
      const client = await connect(wsUrl(), key);
      for (const t of turns) client.ws.send(t);
      await client.until(events);
      client.ws.close();
      const usage = await settled(() => gw.h.services.store.usage.get(keyId), expectedUsage);
      return { spent: 10 - (await gw.h.services.accounts.describeAccount(accountId)).balanceUsd, usage };
    };
    test.each([
      // The vendor names neither model the turns asked for.
      ['refused for its model', turn('no-such-model'), 1, 'gpt-ws-priced'],
      // The refused turn's model starts the next one's name, as a snapshot's would.
      [
        'refused for its previous response',
        turn('gpt-ws', { previous_response_id: 'resp_gone' }),
        1,
        'gpt-ws-priced',
      ],
      // The next answer names a dated snapshot (priced apart) of the model its turn asked for.
      [
        'refused, the next answered as a snapshot',
        turn('gpt-ws', { previous_response_id: 'resp_gone' }),
        1,
        'gpt-ws-dated',
      ],
      ['refused for its model, the next answered as a snapshot', turn('no-such-model'), 1, 'gpt-ws-dated'],
      // A response the vendor created and failed, without usage.
      ['failed without usage', turn('gpt-ws', { input: 'fail' }), 2, 'gpt-ws-priced'],
    ] as const)(
      '%s: the next turn costs and counts as its own model',
      async (_case, first, firstEvents, model) => {
        const expected = { [model]: oneCall };
        const alone = await run([turn(model)], 4, expected);
        expect(alone.usage).toEqual(expected);
        expect(alone.spent).toBeGreaterThan(0);
        const after = await run([first, turn(model)], firstEvents + 4, expected);
        expect(after.usage).toEqual(expected);
        expect(after.spent).toBeCloseTo(alone.spent, 9);
      },
    );
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

  test("a client that stopped reading once a response's answer was out, then left, still pays for it: its backpressure no longer holds the vendor back from the usage", async () => {
    const { key, accountId } = await fundedKey(gw.h.services, 1);
    const { socket, head } = await upgradedSocket(`${gw.base}/v1/responses`, key);
    socket.on('error', () => undefined);
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    // A client's frame is masked.
    const turn = Buffer.from(
      JSON.stringify({ type: 'response.create', model: 'gpt-ws-priced', input: 'long-end' }),
    );
    const mask = Buffer.from([0x12, 0x34, 0x56, 0x78]);
    socket.write(
      Buffer.concat([Buffer.from([0x81, 0x80 | turn.length]), mask, turn.map((b, i) => b ^ mask[i & 3])]),
    );
    // Read up to the answer's end, then nothing more: Genway's writes to the client back up, and hold the vendor back.
    const frames = new FrameReader();
    await new Promise<void>((resolve) => {
      const read = (chunk: Buffer) => {
        const types = frames
          .feed(chunk)
          .map((f) => (JSON.parse(f.payload.toString()) as { type: string }).type);
        if (!types.includes('response.output_item.done')) return;
        socket.pause();
        socket.off('data', read);
        resolve();
      };
      socket.on('data', read);
      if (head.length) read(head);
    });
    await new Promise((r) => setTimeout(r, 300));
    const heldBack = upgrade.usageSent === undefined; // the vendor's usage has not gone out: Genway stopped reading it
    socket.destroy();
    expect(heldBack).toBe(true);
    // 3000 input + 700 output tokens at 1 USD/MTok each: 3700 micro-USD, read once the vendor is let go on.
    const charges = chargedMicros(gw.h.services, accountId);
    expect(await settled(charges, [3700])).toEqual([3700]);
    expect(upgrade.usageSent).toBe(true);
    // Billed, Genway lets the vendor go.
    expect(await settled(() => upgrade.ended, true)).toBe(true);
  });

  test('a client gone without a close frame: Genway closes its half to the client and to the vendor', async () => {
    const { key } = await fundedKey(gw.h.services);
    const { socket } = await upgradedSocket(`${gw.base}/v1/responses`, key);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.resume();
    socket.end();
    await closed; // Genway ended its half: the connection is not held open until the idle timeout
    const upgrade = vendor.upgrades[vendor.upgrades.length - 1];
    expect(await settled(() => upgrade.ended, true)).toBe(true);
  });
});
