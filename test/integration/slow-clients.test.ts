import net from 'node:net';
import http from 'node:http';
import { startGateway, type RunningGateway } from '../helpers/gateway';
import { MockVendor, sse, MESSAGES_STREAM } from '../helpers/mock-vendor';
import { fundedKey } from '../helpers/services';

/**
 * Slow and greedy clients against the server `genway serve` runs (real sockets on loopback): header, request and
 * keep-alive timeouts, early close after a refusal, and the connection cap. No upper time bounds (the machine is
 * shared): each test tells which timeout ended the connection by what was sent (408, a FIN before any answer) and by
 * lower bounds, which only a premature cut could break; a timeout that is not applied leaves the test to its own
 * timeout, far below Node's defaults (headers 60 s, request 300 s).
 */
const SERVER = { headersTimeoutMs: 500, requestTimeoutMs: 1000, keepAliveTimeoutMs: 1000 };
/** How often Node checks the headers and request timeouts (Genway sets 1 s; Node's own is 30 s). */
const SWEEP_MS = 1000;

interface Raw {
  socket: net.Socket;
  /** Everything the server sent. */
  received(): string;
  /** Milliseconds from connect to the server closing the connection. */
  closed: Promise<number>;
  /** Writes `chunk` every `everyMs` until the connection closes. */
  drip(chunk: string, everyMs: number): void;
}

function raw(base: string, first = '', allowHalfOpen = false): Promise<Raw> {
  const { port } = new URL(base);
  const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen });
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    socket.once('connect', () => {
      const start = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const closed = new Promise<number>((done) =>
        socket.once('close', () => {
          clearInterval(timer);
          done(Date.now() - start);
        }),
      );
      if (first) socket.write(first);
      resolve({
        socket,
        received: () => Buffer.concat(chunks).toString('latin1'),
        closed,
        drip: (chunk, everyMs) => {
          timer = setInterval(() => socket.writable && socket.write(chunk), everyMs);
        },
      });
    });
  });
}

/**
 * A server whose request timeout is far off, so only an early close or the linger can end a refused upload, and whose
 * keep-alive timeout is above Node's default (5 s), so a lower bound shows the configured one is in force.
 */
const PATIENT = { requestTimeoutMs: 60_000, keepAliveTimeoutMs: 6000 };

describe('slow clients', () => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let patient: RunningGateway;
  let key: string;
  beforeAll(async () => {
    vendor = await new MockVendor().start();
    gw = await startGateway(vendor.url, { overlay: { server: SERVER } });
    patient = await startGateway(vendor.url, { overlay: { server: PATIENT } });
    ({ key } = await fundedKey(gw.h.services, 10));
  });
  afterAll(async () => {
    await gw?.close();
    await patient?.close();
    await vendor?.stop();
  });

  test('headers sent a byte at a time are cut at the headers timeout with 408', async () => {
    const c = await raw(gw.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    c.drip('a', 100);
    const ms = await c.closed;
    expect(ms).toBeGreaterThanOrEqual(SERVER.headersTimeoutMs - 50);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  test('a connection that sends nothing is cut at the headers timeout', async () => {
    const c = await raw(gw.base);
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  test.each([
    ['gateway', '/v1/messages', 'x-api-key: wrong'],
    ['task API', '/api/v1/tasks', 'Authorization: Bearer wrong'],
  ])(
    '%s: a refused upload is answered at once and the connection closed, not read a byte a second',
    async (_name, path, auth) => {
      // Only our close can end it: the body would take 10,000 s at this rate and the request timeout is a minute.
      const c = await raw(
        patient.base,
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      );
      c.drip(' ', 100);
      await c.closed;
      expect(c.received()).toMatch(/^HTTP\/1\.1 401 /);
      expect(c.received()).toMatch(/\r\nConnection: close\r\n/i); // no client reuses it for its next request
    },
    20_000,
  );

  test('a client that keeps sending after the refusal and our FIN is cut when the linger ends', async () => {
    // The client ignores our FIN and the request timeout is a minute off: only the linger (2 s) can end this.
    const c = await raw(
      patient.base,
      'POST /v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: wrong\r\nContent-Length: 100000\r\n\r\n{',
      true,
    );
    c.drip(' ', 100);
    const ms = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(ms).toBeGreaterThanOrEqual(2000 - 50);
  }, 20_000);

  test.each([
    ['read before forwarding', '/v1/messages', 'application/json', '{"model":"claude-x","messages":['],
    ['streamed to the vendor', '/v1/files', 'multipart/form-data; boundary=b', '--b\r\n'],
  ])(
    'an accepted upload (%s) that arrives too slowly is cut at the request timeout with 408',
    async (_n, path, type, start) => {
      const c = await raw(
        gw.base,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nx-api-key: ${key}\r\n` +
          `Content-Type: ${type}\r\nContent-Length: 100000\r\n\r\n${start}`,
      );
      c.drip(' ', 100);
      const ms = await c.closed;
      expect(ms).toBeGreaterThanOrEqual(SERVER.requestTimeoutMs - 50);
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /); // headers were complete: the request timeout sent it
    },
  );

  test('a stream longer than every request timeout runs to its end (streams keep only the idle timeout)', async () => {
    const events = sse(MESSAGES_STREAM);
    vendor.next((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const parts = events.split('\n\n').filter(Boolean);
      let i = 0;
      const timer = setInterval(() => {
        if (i < parts.length) res.write(`${parts[i++]}\n\n`);
        else {
          clearInterval(timer);
          res.end();
        }
      }, 2500 / parts.length);
    });
    const started = Date.now();
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${gw.base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve(text));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(
        JSON.stringify({ model: 'claude-x', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      );
    });
    expect(Date.now() - started).toBeGreaterThan(SERVER.requestTimeoutMs + SWEEP_MS);
    expect(body).toBe(events);
  });

  test('an idle keep-alive connection is closed at the configured keep-alive timeout', async () => {
    const c = await raw(patient.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const ms = await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    // Node's default would have closed it at 5 s.
    expect(ms).toBeGreaterThanOrEqual(PATIENT.keepAliveTimeoutMs - 50);
  }, 20_000);
});

describe('connection cap', () => {
  test('connections past server.maxConnections are closed as they arrive; a freed slot is used again', async () => {
    const vendor = await new MockVendor().start();
    const gw = await startGateway(vendor.url, { overlay: { server: { maxConnections: 4 } } });
    try {
      const held = await Promise.all([0, 1, 2, 3].map(() => raw(gw.base)));
      await new Promise((r) => setTimeout(r, 50));
      const over = await raw(gw.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await over.closed;
      expect(over.received()).toBe('');

      held[0].socket.destroy();
      await held[0].closed;
      await new Promise((r) => setTimeout(r, 50));
      const next = await raw(gw.base, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      await next.closed;
      expect(next.received()).toMatch(/^HTTP\/1\.1 200 /);
      await new Promise((r) => setTimeout(r, 1100)); // the cap is logged once per second of drops
      expect(gw.h.logs.text).toContain('"dropped":1');
      expect(gw.h.logs.text).toContain('connection cap reached');
      for (const c of held.slice(1)) c.socket.destroy();
    } finally {
      await gw.close();
      await vendor.stop();
    }
  });
});
