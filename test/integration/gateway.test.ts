import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { fundedKey } from '../helpers/services';
import { settled } from '../helpers/eventually';
import {
  freePort,
  rawRequest,
  startGateway,
  useGateway,
  VENDOR_KEYS,
  type RunningGateway,
} from '../helpers/gateway';
import { describeRedis, dropPrefix, uniquePrefix } from '../helpers/redis';
import {
  chatStream,
  MESSAGE_JSON,
  MESSAGES_STREAM,
  MockVendor,
  RESPONSES_STREAM,
  sse,
} from '../helpers/mock-vendor';

/** A messages-format body with bytes no re-serialisation would keep: spacing, escapes, key order, raw UTF-8. */
const ODD_BODY = Buffer.from(
  '{ "max_tokens":16,\n  "model" : "claude-test", "messages":[{"role":"user","content":"caf\\u00e9 ✓ \\ud83d\\ude00 1.0e3"}] ,"z":1.50}',
);

describe('LLM gateway on the wire', () => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  let keyId: string;
  useGateway(
    // Priced (at nothing), so its name labels the token counters; other models are counted as `other`.
    {
      gateway: {
        idleTimeoutMs: 400,
        prices: { 'claude-metrics': { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
      },
    },
    undefined,
    (s) => ({ vendor, gw, key, keyId } = s),
  );

  const post = (path: string, headers: Record<string, string>, body: Buffer | string = ODD_BODY) =>
    rawRequest(`${gw.base}${path}`, { headers: { 'content-type': 'application/json', ...headers }, body });

  test('request body bytes reach the vendor unchanged; response bytes reach the client unchanged', async () => {
    const answer = Buffer.from(
      '{"id":"msg_x" ,"type":"message","content":[{"type":"text","text":"\\u00e9 ✓"}],\n"usage":{"input_tokens":3,"output_tokens":2}}  ',
    );
    vendor.next((_r, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
    const res = await post('/v1/messages', { 'x-api-key': key });
    expect(res.status).toBe(200);
    expect(vendor.last().body.equals(ODD_BODY)).toBe(true);
    expect(res.body.equals(answer)).toBe(true);
    expect(res.headers.via).toBe('1.1 genway');
    expect(Number(res.headers['x-genway-overhead-ms'])).toBeGreaterThanOrEqual(0);
  });

  test('response headers: repeated ones kept, hop-by-hop and Connection-listed ones dropped, status text kept', async () => {
    vendor.next((_r, res) => {
      res.statusMessage = 'Accepted By Vendor';
      res.setHeader('link', ['<https://a.example>; rel=a', '<https://b.example>; rel=b']);
      res.setHeader('x-vendor-trace', 'abc');
      res.setHeader('x-request-id', 'vendor-req-1');
      res.setHeader('x-hop', 'gone');
      res.setHeader('connection', 'keep-alive, x-hop');
      res.setHeader('keep-alive', 'timeout=99');
      res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
    });
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'x-request-id': 'trace-77' },
      });
      req.on('response', (r) => resolve(r.resume()));
      req.on('error', reject);
      req.end(ODD_BODY);
    });
    expect(res.statusCode).toBe(202);
    expect(res.statusMessage).toBe('Accepted By Vendor');
    expect(res.rawHeaders.filter((_v, i, all) => all[i - 1]?.toLowerCase() === 'link')).toEqual([
      '<https://a.example>; rel=a',
      '<https://b.example>; rel=b',
    ]);
    expect(res.headers['x-vendor-trace']).toBe('abc');
    // One request id per header: Genway's own (the client's, kept) apart from the vendor's, which passes unchanged.
    expect(res.headers['genway-request-id']).toBe('trace-77');
    expect(res.headers['x-request-id']).toBe('vendor-req-1');
    expect(res.headers['x-hop']).toBeUndefined();
    expect(res.headers['keep-alive']).not.toBe('timeout=99'); // Node's own keep-alive hint only, never the vendor's
  });

  test("Genway's vendor session stays with Genway: the vendor's account headers and cookies never reach the client, the client's cookies never reach the vendor (JSON and event stream)", async () => {
    const session = {
      'openai-organization': 'org-genway',
      'openai-project': 'proj_genway',
      'anthropic-organization-id': '5f1c0de0-0000-4000-8000-000000000000',
      'set-cookie': ['__cf_bm=vendor-session; path=/; domain=.vendor.example; HttpOnly', 'other=1; Path=/'],
    };
    vendor.next((_r, res) =>
      res
        .writeHead(200, { ...session, 'content-type': 'application/json', 'x-vendor-trace': 'json' })
        .end(JSON.stringify(MESSAGE_JSON)),
    );
    vendor.next((_r, res) =>
      res
        .writeHead(200, { ...session, 'content-type': 'text/event-stream', 'x-vendor-trace': 'sse' })
        .end(sse(RESPONSES_STREAM)),
    );
    const cookie = 'genway_console=client-session; theme=dark';
    const json = await post('/v1/messages', { 'x-api-key': key, cookie });
    const sent = vendor.last().headers;
    const stream = await post(
      '/v1/responses',
      { authorization: `Bearer ${key}`, Cookie: cookie },
      '{"model":"gpt-test","input":"x","stream":true}',
    );
    for (const [res, trace] of [
      [json, 'json'],
      [stream, 'sse'],
    ] as const) {
      expect(res.status).toBe(200);
      expect(res.headers['x-vendor-trace']).toBe(trace); // the vendor's other headers pass
      for (const name of Object.keys(session)) expect(res.headers[name]).toBeUndefined();
    }
    expect(stream.body.toString()).toBe(sse(RESPONSES_STREAM));
    for (const headers of [sent, vendor.last().headers]) {
      expect(headers.cookie).toBeUndefined();
      expect(headers.via).toBe('1.1 genway');
    }
  });

  test('a chunked request body is forwarded byte-identical with its length', async () => {
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (r) => {
        r.resume();
        resolve(r.statusCode!);
      });
      req.on('error', reject);
      req.write(ODD_BODY.subarray(0, 10));
      req.end(ODD_BODY.subarray(10));
    });
    expect(res).toBe(200);
    expect(vendor.last().body.equals(ODD_BODY)).toBe(true);
    expect(vendor.last().headers['content-length']).toBe(String(ODD_BODY.length));
    expect(vendor.last().headers['transfer-encoding']).toBeUndefined();
  });

  test('headers: anthropic-version filled in only when absent, vendor headers kept, hop-by-hop and credentials dropped', async () => {
    await post('/v1/messages', { 'x-api-key': key });
    expect(vendor.last().headers['anthropic-version']).toBe('2023-06-01');

    await post('/v1/messages', {
      'x-api-key': key,
      'anthropic-version': '2099-01-01',
      'anthropic-beta': 'tools-2099',
      'x-custom-hop': 'secret-hop',
      connection: 'keep-alive, x-custom-hop',
      'keep-alive': 'timeout=5',
      te: 'trailers',
      'accept-encoding': 'gzip, br',
      'x-request-trace': 'abc',
    });
    const h = vendor.last().headers;
    expect(h['anthropic-version']).toBe('2099-01-01');
    expect(h['anthropic-beta']).toBe('tools-2099');
    expect(h['x-request-trace']).toBe('abc');
    expect(h['x-custom-hop']).toBeUndefined();
    expect(h['keep-alive']).toBeUndefined();
    expect(h.te).toBeUndefined();
    expect(h['accept-encoding']).toBeUndefined();
    expect(h.via).toBe('1.1 genway');
    expect(VENDOR_KEYS.anthropic).toContain(h['x-api-key']);

    await post(
      '/v1/responses',
      { authorization: `Bearer ${key}`, 'openai-beta': 'assistants=v2' },
      '{"model":"gpt-test","input":"x"}',
    );
    expect(vendor.last().headers['openai-beta']).toBe('assistants=v2');
    expect(vendor.last().headers['anthropic-version']).toBeUndefined();
  });

  test('a chat stream gets include_usage added after its opening brace, every other byte as sent', async () => {
    const odd =
      ' { "model" : "gpt-x",\n "stream":true, "messages":[{"role":"user","content":"caf\\u00e9"}] }';
    const res = await post('/v1/chat/completions', { authorization: `Bearer ${key}` }, odd);
    expect(res.status).toBe(200);
    expect(vendor.last().body.toString()).toBe(
      ` {"stream_options":{"include_usage":true}, "model" : "gpt-x",\n "stream":true, "messages":[{"role":"user","content":"caf\\u00e9"}] }`,
    );
    // The client's stream: the four chunks and [DONE], without the usage-only chunk it did not ask for.
    const events = res.body.toString().split('\n\n').filter(Boolean);
    expect(events).toHaveLength(5);
    expect(events[4]).toBe('data: [DONE]');
    expect(events.some((e) => e.includes('"choices":[]'))).toBe(false);

    // Options of its own are kept, with include_usage added.
    await post(
      '/v1/chat/completions',
      { authorization: `Bearer ${key}` },
      '{"model":"gpt-x","stream":true,"stream_options":{"include_obfuscation":false},"messages":[]}',
    );
    expect(JSON.parse(vendor.last().body.toString()).stream_options).toEqual({
      include_obfuscation: false,
      include_usage: true,
    });
    // Not streaming: the body goes as sent.
    const plain = '{"model":"gpt-x","messages":[]}';
    await post('/v1/chat/completions', { authorization: `Bearer ${key}` }, plain);
    expect(vendor.last().body.toString()).toBe(plain);
  });

  test('the key as ?key= works and never travels on; other query parameters do', async () => {
    const res = await post(
      `/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=${key}`,
      {},
      '{"contents":[]}',
    );
    expect(res.status).toBe(200);
    expect(vendor.last().url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
    expect(vendor.last().headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
    await post(`/v1beta/models/gemini-test:generateContent?key=${key}`, {}, '{"contents":[]}');
    expect(vendor.last().url).toBe('/v1beta/models/gemini-test:generateContent');
  });

  test('streamGenerateContent without alt=sse (a JSON array) is metered from its last usageMetadata', async () => {
    const res = await post(
      '/v1beta/models/gemini-test:streamGenerateContent',
      { 'x-goog-api-key': key },
      '{"contents":[]}',
    );
    expect(res.status).toBe(200);
    expect(Array.isArray(JSON.parse(res.body.toString()))).toBe(true);
    const expected = {
      'gemini-test': { requests: 1, input: 9, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
  });

  test('a compressed upstream answer passes through compressed, consistent, and still metered', async () => {
    const json = Buffer.from(
      '{"type":"message","model":"claude-test","usage":{"input_tokens":100,"output_tokens":50}}',
    );
    const gz = zlib.gzipSync(json);
    vendor.next((_r, res) =>
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': gz.length,
        })
        .end(gz),
    );
    const res = await post('/v1/messages', { 'x-api-key': key, 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-length']).toBe(String(gz.length));
    expect(res.body.equals(gz)).toBe(true);
    const expected = {
      'claude-test': { requests: 1, input: 100, output: 50, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
  });

  test('a delayed event stream reaches the client event by event, before the upstream sends the next', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const events = sse(MESSAGES_STREAM)
      .split('\n\n')
      .filter(Boolean)
      .map((e) => `${e}\n\n`);
    vendor.next(async (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events[0]);
      await released; // the second event is only sent once the client has seen the first
      for (const e of events.slice(1)) res.write(e);
      res.end();
    });
    const received: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        expect(res.headers['content-encoding']).toBeUndefined();
        res.on('data', (chunk: Buffer) => {
          received.push(chunk.toString());
          if (received.length === 1) release();
        });
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end('{"model":"claude-test","stream":true}');
    });
    await done;
    expect(received[0]).toBe(events[0]);
    expect(received.join('')).toBe(events.join(''));
  });

  test('a long stream reaches the client unchanged; a client that stops reading holds the vendor back, with a few reads at most waiting in Genway; no write call to the client is an empty one', async () => {
    const chunk = Buffer.from(sse(MESSAGES_STREAM.slice(1, 3)).repeat(300)).subarray(0, 64 << 10);
    const total = 1024; // 64 MiB, far more than the sockets' buffers between the vendor and the client hold
    let written = 0;
    let backlog = -1; // what Genway held for the client's socket when the vendor was held back
    let stalled!: () => void;
    const stall = new Promise<void>((resolve) => (stalled = resolve));
    const sockets: import('node:net').Socket[] = [];
    vendor.next(async (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (; written < total; written++) {
        if (res.write(chunk)) continue;
        const drain = new Promise((resolve) => res.once('drain', resolve));
        // Held back: no drain for half a second, and what Genway holds for the client the same from one look to the
        // next (a busy Genway that has not read the vendor yet holds nothing, or more each time).
        let seen = -1;
        const look = () => {
          const held = Math.max(...sockets.map((socket) => socket.writableLength));
          if (held > 0 && held === seen) {
            backlog = held;
            stalled();
          } else {
            seen = held;
            timer = setTimeout(look, 200);
          }
        };
        let timer = setTimeout(look, 500);
        await drain;
        clearTimeout(timer);
      }
      stalled(); // never held back: the test fails below on how much was written by then
      res.end();
    });
    // undici hands over an empty piece where a paused answer resumes with nothing read meanwhile; node:http would make
    // it a write call of its own on the client's socket. Since the vendor is paused on the client's backlog, not on
    // each read, this run need not meet one: the check holds whatever it meets.
    let writes = 0;
    let empty = 0;
    const watch = (socket: import('node:net').Socket) => {
      sockets.push(socket);
      const write = socket.write;
      socket.write = function (this: typeof socket, data: Uint8Array | string, ...rest: never[]) {
        writes++;
        if (data.length === 0) empty++;
        return write.call(this, data, ...rest);
      } as typeof socket.write;
    };
    gw.server.on('connection', watch);
    try {
      const hash = createHash('sha256');
      let size = 0;
      let atStall = -1;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(`${gw.base}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          agent: false,
        });
        req.on('response', (res) => {
          res.pause();
          void stall.then(() => {
            atStall = written;
            res.on('data', (c: Buffer) => {
              size += c.length;
              hash.update(c);
            });
            res.on('end', resolve);
            res.resume();
          });
        });
        req.on('error', reject);
        req.end('{"model":"claude-test","stream":true}');
      });
      expect(atStall).toBeLessThan(total / 2);
      // Paused past 128 KiB waiting (src/gateway/proxy.ts CLIENT_BACKLOG), with one read more at most.
      expect(backlog).toBeGreaterThan(128 << 10);
      expect(backlog).toBeLessThan(384 << 10);
      const expected = createHash('sha256');
      for (let i = 0; i < total; i++) expected.update(chunk);
      expect(size).toBe(total * chunk.length);
      expect(hash.digest('hex')).toBe(expected.digest('hex'));
      expect(empty).toBe(0);
      expect(writes).toBeGreaterThan(0);
    } finally {
      gw.server.off('connection', watch);
    }
  });

  test('a client that goes away aborts the upstream request, and the usage seen so far is recorded', async () => {
    const events = sse(MESSAGES_STREAM.slice(0, 4));
    vendor.next((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events); // then never ends
    });
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
      });
      req.on('response', (res) =>
        res.once('data', () => {
          req.destroy();
          resolve();
        }),
      );
      req.on('error', () => undefined);
      req.end('{"model":"claude-test","stream":true}');
      setTimeout(() => reject(new Error('no first event')), 5000).unref();
    });
    await vendor.last().closed; // the upstream connection was closed by Genway
    const expected = {
      'claude-test': { requests: 1, input: 25, output: 1, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
    };
    expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
  });

  /**
   * Sends a stream whose vendor holds back its last part (the usage) for 300 ms; the client leaves once it has read
   * `leaveAt`. Returns whether the vendor was still connected when it sent the rest.
   */
  async function leaveEarly(
    path: string,
    headers: Record<string, string>,
    body: string,
    stream: string,
    cut: string,
    leaveAt: string,
  ) {
    const at = stream.indexOf(cut);
    let sentRest!: (connected: boolean) => void;
    const rest = new Promise<boolean>((resolve) => (sentRest = resolve));
    vendor.next((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(stream.slice(0, at));
      setTimeout(() => {
        sentRest(!res.destroyed);
        res.end(stream.slice(at));
      }, 300);
    });
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${gw.base}${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
      });
      let seen = '';
      req.on('response', (res) =>
        res.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes(leaveAt)) {
            req.destroy();
            resolve();
          }
        }),
      );
      req.on('error', () => undefined);
      req.end(body);
      setTimeout(() => reject(new Error(`never saw ${leaveAt}`)), 5000).unref();
    });
    return rest;
  }

  test("a client that leaves once a stream's answer is out still pays for it: the usage that follows is read, not cut off", async () => {
    const { key: chatKey, keyId: chatKeyId } = await fundedKey(gw.h.services);
    // Chat: the client leaves on the finish reason, before the usage chunk (which Genway asked for on its behalf).
    const chat = chatStream(true);
    expect(
      await leaveEarly(
        '/v1/chat/completions',
        { authorization: `Bearer ${chatKey}` },
        '{"model":"gpt-test","stream":true,"messages":[]}',
        chat,
        '{"id":"chatcmpl-mock","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[],',
        '"finish_reason":"stop"',
      ),
    ).toBe(true);
    // Messages: the client leaves when the last block stops, before message_delta's output count.
    const { key: antKey, keyId: antKeyId } = await fundedKey(gw.h.services);
    const messages = sse(MESSAGES_STREAM);
    expect(
      await leaveEarly(
        '/v1/messages',
        { 'x-api-key': antKey },
        '{"model":"claude-test","stream":true}',
        messages,
        'event: message_delta',
        'content_block_stop',
      ),
    ).toBe(true);
    // Responses: the client leaves when the last output item is done, before response.completed.
    const { key: respKey, keyId: respKeyId } = await fundedKey(gw.h.services);
    const done = {
      type: 'response.output_item.done',
      output_index: 0,
      item: { type: 'message', id: 'msg_1' },
    };
    const responses = sse([
      ...RESPONSES_STREAM.slice(0, -1),
      ['response.output_item.done', done],
      RESPONSES_STREAM.at(-1)!,
    ]);
    expect(
      await leaveEarly(
        '/v1/responses',
        { authorization: `Bearer ${respKey}` },
        '{"model":"gpt-test","stream":true,"input":"x"}',
        responses,
        'event: response.completed',
        'response.output_item.done',
      ),
    ).toBe(true);
    const expected = {
      responses: {
        'gpt-test': { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
      },
      chat: { 'gpt-test': { requests: 1, input: 16, output: 5, cacheRead: 4, cacheWrite: 0, reasoning: 1 } },
      messages: {
        'claude-test': { requests: 1, input: 25, output: 7, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
      },
    };
    const usage = async () => ({
      responses: await gw.h.services.store.usage.get(respKeyId),
      chat: await gw.h.services.store.usage.get(chatKeyId),
      messages: await gw.h.services.store.usage.get(antKeyId),
    });
    expect(await settled(usage, expected)).toEqual(expected);
  });

  test('a client that leaves mid-answer stops the vendor at once: nothing more is generated for it', async () => {
    const messages = sse(MESSAGES_STREAM);
    expect(
      await leaveEarly(
        '/v1/messages',
        { 'x-api-key': key },
        '{"model":"claude-test","stream":true}',
        messages,
        'event: content_block_delta',
        'content_block_start',
      ),
    ).toBe(false);
    // A block stopped, but another started after it (a tool call after the text): the answer is not out yet.
    const [start, block, ping, ...rest] = MESSAGES_STREAM;
    const secondBlock: [string, unknown][] = [
      [
        'content_block_start',
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '!' } },
      ],
    ];
    const twoBlocks = sse([
      start,
      block,
      ping,
      ...rest.slice(0, 3),
      ...secondBlock,
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ...rest.slice(3),
    ]);
    expect(
      await leaveEarly(
        '/v1/messages',
        { 'x-api-key': key },
        '{"model":"claude-test","stream":true}',
        twoBlocks,
        '"index":1,"delta"',
        '"content_block_start","index":1',
      ),
    ).toBe(false);
  });

  test('idle timeout, not total: a stream active for longer than the timeout lives; a silent one is cut', async () => {
    vendor.next(async (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 8; i++) {
        res.write(`data: {"i":${i}}\n\n`);
        await new Promise((r) => setTimeout(r, 100)); // 800 ms in all, never 400 ms of silence
      }
      res.end('data: [DONE]\n\n');
    });
    const lively = await post(
      '/v1/responses',
      { authorization: `Bearer ${key}` },
      '{"model":"gpt-test","stream":true}',
    );
    expect(lively.body.toString()).toContain('data: [DONE]');

    vendor.next((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"i":0}\n\n'); // then silence
    });
    const cut = await post(
      '/v1/responses',
      { authorization: `Bearer ${key}` },
      '{"model":"gpt-test","stream":true}',
    ).catch((e: NodeJS.ErrnoException) => e);
    // The client sees the stream end abnormally (no terminating chunk), never a made-up clean end.
    expect(cut).not.toHaveProperty('status');
    expect((cut as Error).message).toMatch(/aborted|socket hang up|ECONNRESET/);
  });

  test('no answer within the idle timeout is a vendor-shaped 504', async () => {
    vendor.next(() => undefined); // never answers
    const res = await post(
      '/v1/responses',
      { authorization: `Bearer ${key}` },
      '{"model":"gpt-test","input":"x"}',
    );
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body.toString())).toEqual({
      error: {
        message: 'Upstream openai did not answer within 400 ms',
        type: 'server_error',
        param: null,
        code: 'upstream_timeout',
      },
    });
  });

  test('refusals in each vendor’s own shape: 401, 404, 405, 413, 508', async () => {
    const noKey = await post('/v1/messages', {});
    expect(noKey.status).toBe(401);
    expect(JSON.parse(noKey.body.toString())).toEqual({
      type: 'error',
      error: {
        type: 'authentication_error',
        message: 'Missing API key: send your Genway key in x-api-key or Authorization: Bearer',
      },
    });
    const gem = await post('/v1beta/models/g:generateContent', { 'x-goog-api-key': 'nope' }, '{}');
    expect(gem.status).toBe(401);
    expect(JSON.parse(gem.body.toString()).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });

    const unknown = await rawRequest(`${gw.base}/v1/nothing-here`, {
      method: 'GET',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body.toString()).error.code).toBe('not_found');

    const method = await rawRequest(`${gw.base}/v1/messages`, {
      method: 'GET',
      headers: { 'x-api-key': key },
    });
    expect(method.status).toBe(405);
    expect(method.headers.allow).toBe('POST');
    expect(JSON.parse(method.body.toString()).type).toBe('error');

    const big = await post('/v1/messages', { 'x-api-key': key }, Buffer.alloc(33 * 1024 * 1024, 0x20));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body.toString()).error.type).toBe('request_too_large');

    const looped = await post('/v1/messages', { 'x-api-key': key, via: '1.1 edge, 1.1 genway' });
    expect(looped.status).toBe(508);
    expect(JSON.parse(looped.body.toString()).error.type).toBe('api_error');
  });

  test('one keep-alive connection carrying several clients’ keys: every request is its own key’s, revocation included', async () => {
    const restricted = await fundedKey(gw.h.services, 100, { models: ['claude-only'] });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ports: number[] = [];
    const call = (apiKey: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${gw.base}/v1/messages`, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        });
        req.on('socket', (socket) => {
          const note = () => ports.push(socket.localPort!);
          if (socket.localPort) note();
          else socket.once('connect', note);
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(ODD_BODY);
      });
    try {
      expect(await call(restricted.key)).toBe(403); // claude-test is not on its allow-list
      expect(await call(key)).toBe(200);
      expect(await call(restricted.key)).toBe(403);
      expect(await call(`gwk_${'A'.repeat(43)}`)).toBe(401); // well formed, unknown
      expect(await call(key)).toBe(200);
      await gw.h.services.accounts.revokeKey(keyId);
      expect(await call(key)).toBe(401);
      expect(await call(restricted.key)).toBe(403);
      // A 401 comes before the body is read, so it ends its connection (src/http/server.ts): the first four calls
      // share one connection, the next two (a hit, then the same key revoked) another.
      const [a, , , , b] = ports;
      expect(ports).toEqual([a, a, a, a, b, b, expect.any(Number)]);
      expect(new Set(ports).size).toBe(3);
    } finally {
      agent.destroy();
    }
  });

  test('a key with an allow-list: a second model field in other case is refused, as a case-blind back end would run it', async () => {
    const restricted = await fundedKey(gw.h.services, 100, { models: ['claude-only'] });
    const body = '{"model":"claude-only","max_tokens":8,"messages":[],"MODEL":"claude-other"}';
    const before = vendor.received.length;
    const refused = await post('/v1/messages', { 'x-api-key': restricted.key }, body);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.body.toString())).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringMatching(/^MODEL: a second model field spelled in other case/),
      },
    });
    expect(vendor.received.length).toBe(before); // nothing reached the vendor
    // Without an allow-list nothing is checked: the bytes pass as sent.
    const passed = await post('/v1/messages', { 'x-api-key': key }, body);
    expect(passed.status).toBe(200);
    expect(vendor.last().body.toString()).toBe(body);
    // The allow-listed model alone passes.
    const alone = await post('/v1/messages', { 'x-api-key': restricted.key }, '{"model":"claude-only"}');
    expect(alone.status).toBe(200);
    // A priced model is refused so for every key: the price is the checked model's, the back end would run MODEL.
    const sent = vendor.received.length;
    const priced = await post(
      '/v1/messages',
      { 'x-api-key': key },
      '{"model":"claude-metrics","MODEL":"claude-other"}',
    );
    expect(priced.status).toBe(400);
    expect(JSON.parse(priced.body.toString()).error.message).toMatch(
      /^MODEL: a second model field spelled in other case; .* instead of the model Genway checked and prices$/,
    );
    expect(vendor.received.length).toBe(sent);
  });

  test("a key with an allow-list: a form's model is the one the vendor's multipart parser reads, and two of them are refused", async () => {
    const restricted = await fundedKey(gw.h.services, 100, { models: ['whisper-only'] });
    const form = (...parts: string[]) => `${parts.map((p) => `--B\r\n${p}\r\n`).join('')}--B--\r\n`;
    const model = (value: string, disposition = 'form-data; name="model"') =>
      `Content-Disposition: ${disposition}\r\n\r\n${value}`;
    const file = (content: string) =>
      `Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n${content}`;
    const send = (body: string) =>
      rawRequest(`${gw.base}/v1/audio/transcriptions`, {
        headers: {
          authorization: `Bearer ${restricted.key}`,
          'content-type': 'multipart/form-data; boundary=B',
        },
        body,
      });
    const refusals: [string, string, number, RegExp][] = [
      // A delimiter not at a line start is file content to every multipart parser: the model is the real part's.
      [
        'a lookalike part inside the file',
        form(file(`RIFF--B\r\n${model('whisper-only')}`), model('whisper-forbidden')),
        400,
        /^model: the form names it in a way multipart parsers read differently/,
      ],
      // Go decodes an RFC 2231 name, busboy does not; Python keeps the last of two name parameters.
      [
        'an encoded name',
        form(model('whisper-forbidden', "form-data; name*=utf-8''model"), model('whisper-only')),
        400,
        /^model: the form names it/,
      ],
      [
        'two name parameters',
        form(model('whisper-only'), model('whisper-forbidden', 'form-data; name="x"; name="model"')),
        400,
        /^model: the form names it/,
      ],
      // Two model fields: Go's FormValue reads the first, Python's frameworks the last.
      [
        'two model fields',
        form(model('whisper-only'), file('RIFF'), model('whisper-forbidden')),
        400,
        /^model: /,
      ],
      // Parameters in any order, and an unquoted name, are the same field.
      [
        'a field named after another parameter',
        form(model('whisper-forbidden', 'form-data; x="y"; name="model"'), model('whisper-only')),
        400,
        /^model: /,
      ],
      [
        'an unquoted name',
        form(model('whisper-forbidden', 'form-data; name=model'), file('RIFF')),
        403,
        /whisper-forbidden/,
      ],
    ];
    const before = vendor.received.length;
    for (const [label, body, status, message] of refusals) {
      const res = await send(body);
      const { error } = JSON.parse(res.body.toString()) as { error: { message: string } };
      expect([label, res.status, error.message]).toEqual([label, status, expect.stringMatching(message)]);
    }
    expect(vendor.received.length).toBe(before); // nothing reached the vendor
    const body = form(file('RIFF--B-not-a-delimiter'), model('whisper-only'));
    await send(body);
    expect(vendor.received.length).toBe(before + 1);
    expect(vendor.last().body.toString()).toBe(body);
  });

  test('metrics: tokens by vendor, model (priced ones by name, others as `other`) and type; upstream codes; overhead and first-byte histograms', async () => {
    await post('/v1/messages', { 'x-api-key': key }, '{"model":"claude-metrics","stream":true}');
    await settled(async () => Object.keys(await gw.h.services.store.usage.get(keyId)).length, 1);
    await post('/v1/messages', { 'x-api-key': key }, '{"model":"claude-random-name-1","stream":true}');
    await settled(async () => Object.keys(await gw.h.services.store.usage.get(keyId)).length, 2);
    await settled(
      async () => (await gw.h.services.metrics.registry.metrics()).includes('model="other",type="input"'),
      true,
    );
    const text = await gw.h.services.metrics.registry.metrics();
    expect(text).not.toContain('claude-random-name-1'); // a name the client chose, not in gateway.prices
    expect(text).toContain(
      'genway_gateway_tokens_total{vendor="anthropic",model="claude-metrics",type="input"} 25',
    );
    expect(text).toContain(
      'genway_gateway_tokens_total{vendor="anthropic",model="claude-metrics",type="output"} 7',
    );
    expect(text).toContain(
      'genway_gateway_tokens_total{vendor="anthropic",model="claude-metrics",type="cache_read"} 5',
    );
    expect(text).toMatch(/genway_gateway_upstream_responses_total\{vendor="anthropic",code="200"\} \d+/);
    expect(text).toMatch(
      /genway_gateway_overhead_seconds_count\{vendor="anthropic",status_class="2xx"\} \d+/,
    );
    expect(text).toMatch(
      /genway_gateway_upstream_ttfb_seconds_count\{vendor="anthropic",status_class="2xx"\} \d+/,
    );
    expect(text).toMatch(
      /genway_http_requests_total\{route="\/v1\/messages",method="POST",status="200"\} \d+/,
    );
  });

  test('admin API: a key’s gateway usage by model', async () => {
    await post('/v1/messages', { 'x-api-key': key }, '{"model":"claude-admin","stream":true}');
    const expected = {
      'claude-admin': { requests: 1, input: 25, output: 7, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
    };
    await settled(() => gw.h.services.store.usage.get(keyId), expected);
    const res = await rawRequest(`${gw.base}/admin/v1/keys/${keyId}/usage`, {
      method: 'GET',
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
    });
    expect(JSON.parse(res.body.toString())).toEqual({
      code: 200,
      message: 'success',
      data: { keyId, models: expected },
    });
  });

  test('the gateway owns /v1, /v1beta, /v1alpha, /upload and the vendor mounts; the task API and lookalikes go to Express', () => {
    const owns = (url: string) => gw.h.services.gateway.owns(url);
    for (const url of [
      '/v1',
      '/v1/',
      '/v1/messages',
      '/v1?x=1',
      '/v1beta',
      '/v1beta/models',
      '/v1beta?key=k',
      '/v1alpha/models',
      '/upload/v1beta/files?upload_id=x',
      '/anthropic/v1/messages',
      '/openai',
      '/gemini/v1beta/models',
    ]) {
      expect([url, owns(url)]).toEqual([url, true]);
    }
    for (const url of [
      '/api/v1/models',
      '/v10/messages',
      '/v1betax',
      '/v1x',
      '/healthz',
      '/',
      '/openaix/v1',
      '/uploads',
      '/admin/v1/accounts',
      '/files/abc',
    ]) {
      expect([url, owns(url)]).toEqual([url, false]);
    }
  });

  test('no log line holds the Genway key or a vendor key', async () => {
    await post('/v1/messages', { 'x-api-key': key });
    await post(`/v1beta/models/gemini-test:generateContent?key=${key}`, {}, '{}');
    await post('/v1/messages', { 'x-api-key': 'gwk_not-a-real-key-but-secret' });
    const logs = gw.h.logs.text;
    expect(logs).toContain('/v1beta/models/gemini-test:generateContent?key=[redacted]');
    for (const secret of [key, 'gwk_not-a-real-key-but-secret', ...Object.values(VENDOR_KEYS).flat()]) {
      expect(logs).not.toContain(secret);
    }
  });
});

describe('LLM gateway uploads', () => {
  const servers: http.Server[] = [];
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  test('a 128 MiB multipart upload is piped, not held: the vendor has the first bytes before the client sends more, and all of them unchanged', async () => {
    // A vendor that hashes the body as it arrives and says when its first bytes came.
    let firstBytes!: () => void;
    const arrived = new Promise<void>((r) => (firstBytes = r));
    const received = { bytes: 0, sha: '', key: '', contentLength: '' };
    const files = http.createServer((req, res) => {
      const hash = createHash('sha256');
      received.key = String(req.headers.authorization);
      received.contentLength = String(req.headers['content-length']);
      req.on('data', (c: Buffer) => {
        received.bytes += c.length;
        hash.update(c);
        firstBytes();
      });
      req.on('end', () => {
        received.sha = hash.digest('hex');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"file-up1","object":"file"}');
      });
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    const gw = await startGateway(`http://127.0.0.1:${(files.address() as AddressInfo).port}`);
    try {
      const { key } = await fundedKey(gw.h.services);
      const boundary = 'genway-test-boundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < chunk.length; i++) chunk[i] = (i * 31 + 7) & 0xff;
      const chunks = 128;
      const total = head.length + chunks * chunk.length + tail.length;
      const sent = createHash('sha256');
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${gw.base}/v1/files`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(total),
          },
        });
        req.on('response', (r) => {
          let body = '';
          r.on('data', (c: Buffer) => (body += c.toString()));
          r.on('end', () => resolve({ status: r.statusCode!, body }));
        });
        req.on('error', reject);
        const write = (b: Buffer) => {
          sent.update(b);
          return req.write(b);
        };
        write(head);
        write(chunk);
        // Nothing more is sent until the vendor has bytes: a proxy that held the body would wait here forever.
        void arrived.then(async () => {
          for (let i = 1; i < chunks; i++) {
            if (!write(chunk)) await new Promise((r) => req.once('drain', r));
          }
          write(tail);
          req.end();
        });
      });
      expect(res).toEqual({ status: 200, body: '{"id":"file-up1","object":"file"}' });
      expect(received.bytes).toBe(total);
      expect(received.contentLength).toBe(String(total));
      expect(received.sha).toBe(sent.digest('hex'));
      expect(received.key).toBe(`Bearer ${VENDOR_KEYS.openai[0]}`);
    } finally {
      await gw.close();
      files.closeAllConnections();
      await new Promise((r) => files.close(r));
    }
  });
  test('a client that breaks off mid-upload aborts the upstream request; the vendor never sees a whole body', async () => {
    let firstBytes!: () => void;
    const arrived = new Promise<void>((r) => (firstBytes = r));
    let vendorEnded!: Promise<string>;
    const files = http.createServer((req, res) => {
      if (req.method === 'GET') return void res.writeHead(404).end();
      vendorEnded = new Promise((resolve) =>
        req.once('close', () => resolve(req.complete ? 'end' : 'aborted')),
      );
      req.on('data', () => firstBytes());
    });
    servers.push(files);
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    const gw = await startGateway(`http://127.0.0.1:${(files.address() as AddressInfo).port}`);
    try {
      const { key } = await fundedKey(gw.h.services);
      const req = http.request(`${gw.base}/v1/files`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(10 << 20),
        },
      });
      req.on('error', () => undefined);
      req.write(Buffer.alloc(1 << 20, 0x61));
      await arrived;
      req.destroy();
      expect(await vendorEnded).toBe('aborted');
      // Genway goes on answering.
      const after = await rawRequest(`${gw.base}/v1/models`, {
        method: 'GET',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(after.status).toBe(404); // this vendor stand-in knows no models; the 404 is its own
    } finally {
      await gw.close();
    }
  });
});

describe('LLM gateway upstream failures', () => {
  test('an unreachable vendor is a vendor-shaped 502', async () => {
    const gw = await startGateway(`http://127.0.0.1:${await freePort()}`);
    try {
      const { key } = await fundedKey(gw.h.services);
      const res = await rawRequest(`${gw.base}/v1beta/models/g:generateContent`, {
        headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(res.status).toBe(502);
      expect(JSON.parse(res.body.toString())).toEqual({
        error: { code: 502, message: 'Upstream gemini unreachable: ECONNREFUSED', status: 'UNAVAILABLE' },
      });
    } finally {
      await gw.close();
    }
  });

  test('a vendor base URL that points back at Genway is stopped by Via (508), not looped', async () => {
    const port = await freePort();
    const gw = await startGateway(`http://127.0.0.1:${port}`, { port });
    try {
      const { key } = await fundedKey(gw.h.services);
      const res = await rawRequest(`${gw.base}/v1/messages`, {
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: '{"model":"claude-test"}',
      });
      // The second pass refuses; the first passes that answer back like any upstream answer.
      expect(res.status).toBe(508);
      expect(res.headers.via).toBe('1.1 genway');
      expect(JSON.parse(res.body.toString()).error.message).toContain('already passed through Genway');
    } finally {
      await gw.close();
    }
  });
});

describeRedis('LLM gateway on Redis', () => {
  test('usage and rate limits live in Redis', async () => {
    const vendor = await new MockVendor().start();
    const gw = await startGateway(vendor.url, { redis: true });
    try {
      const { key, keyId } = await fundedKey(gw.h.services, 10, {
        rateLimit: { ratePerSec: 0.01, burst: 2 },
      });
      const call = () =>
        rawRequest(`${gw.base}/v1/messages`, {
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{"model":"claude-test","stream":true}',
        });
      expect((await call()).status).toBe(200);
      expect((await call()).status).toBe(200);
      const third = await call();
      expect(third.status).toBe(429);
      expect(JSON.parse(third.body.toString()).error.type).toBe('rate_limit_error');
      const expected = {
        'claude-test': { requests: 2, input: 50, output: 14, cacheRead: 10, cacheWrite: 0, reasoning: 0 },
      };
      expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    } finally {
      await gw.close();
      await vendor.stop();
    }
  });

  test('usage summed in a replica is written by its shutdown, and seen by another replica', async () => {
    const vendor = await new MockVendor().start();
    const prefix = uniquePrefix('gw');
    // A flush interval no test waits out: only the shutdown can write these calls.
    const a = await startGateway(vendor.url, { redis: true, prefix, gateway: { usageFlushMs: 600_000 } });
    const b = await startGateway(vendor.url, { redis: true, prefix });
    let aClosed = false;
    try {
      const { key, keyId } = await fundedKey(a.h.services);
      for (let i = 0; i < 3; i++) {
        const res = await rawRequest(`${a.base}/v1/messages`, {
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{"model":"claude-test","stream":true}',
        });
        expect(res.status).toBe(200);
      }
      await new Promise((r) => setTimeout(r, 50)); // the last call's usage is summed once its response closed
      expect(await b.h.services.store.usage.get(keyId)).toEqual({});
      await a.close();
      aClosed = true;
      expect(await b.h.services.store.usage.get(keyId)).toEqual({
        'claude-test': { requests: 3, input: 75, output: 21, cacheRead: 15, cacheWrite: 0, reasoning: 0 },
      });
    } finally {
      if (!aClosed) await a.close();
      await b.close();
      await dropPrefix(prefix);
      await vendor.stop();
    }
  });

  test('a key revoked on one replica is refused by another that has just used it within the key gate bound (1 s)', async () => {
    const vendor = await new MockVendor().start();
    const prefix = uniquePrefix('gw');
    const a = await startGateway(vendor.url, { redis: true, prefix });
    const b = await startGateway(vendor.url, { redis: true, prefix });
    try {
      const { key, keyId } = await fundedKey(a.h.services);
      const call = () =>
        rawRequest(`${b.base}/v1/messages`, {
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{"model":"claude-test"}',
        });
      expect((await call()).status).toBe(200); // b now holds the key's record and a lease of its tokens
      await a.h.services.accounts.revokeKey(keyId);
      // b hears of it through the key-event stream (milliseconds); the guarantee is 1 s (KEY_GATE_TIMING.trustMs).
      let refused = await call();
      const deadline = Date.now() + 1000;
      while (refused.status === 200 && Date.now() < deadline) refused = await call();
      expect(refused.status).toBe(401);
      expect(JSON.parse(refused.body.toString()).error.message).toBe(
        'Invalid API key: this key has been revoked',
      );
    } finally {
      await a.close();
      await b.close();
      await dropPrefix(prefix);
      await vendor.stop();
    }
  });
});
