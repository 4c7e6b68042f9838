import net from 'node:net';
import http from 'node:http';
import type { App } from '../../src/app';
import { listen } from '../../src/http/server';
import { createLogger } from '../../src/observability/logger';
import { LogCapture, testConfig } from '../helpers/services';

/** A connection on loopback that records when the server closed it. */
function connect(port: number, send: string) {
  const socket = net.connect(port, '127.0.0.1');
  const events: string[] = [];
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', () => events.push('data'));
  socket.on('error', () => undefined);
  socket.once('connect', () => socket.write(send));
  return { socket, closed, events };
}

describe('shutdown (drain)', () => {
  test('connections that sent nothing or half a request close at once; an in-flight request finishes, then drain ends', async () => {
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // The application: one slow route, answered when the test releases it.
    const handler = (_req: http.IncomingMessage, res: http.ServerResponse) =>
      void released.then(() => {
        order.push('in-flight answered');
        res.end('done');
      });
    const app = Object.assign(handler, { upgrade: () => undefined }) as unknown as App;
    const logs = new LogCapture();
    const running = await listen(app, { ...testConfig().server, port: 0 }, createLogger(testConfig(), logs));

    const silent = connect(running.port, '');
    const half = connect(running.port, 'GET /sl');
    const headersOnly = connect(running.port, 'GET /slow HTTP/1.1\r\nHost: x\r\n');
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${running.port}/slow`, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        })
        .on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 100)); // every connection accepted, the request in flight

    const drained = running.drain(60_000).then(() => order.push('drained'));
    await Promise.all(
      [silent, half, headersOnly].map((c, i) => c.closed.then(() => order.push(`unfinished ${i} closed`))),
    );
    release();
    expect(await answer).toEqual({ status: 200, body: 'done' });
    await drained;

    expect(order.slice(0, 3).sort()).toEqual([
      'unfinished 0 closed',
      'unfinished 1 closed',
      'unfinished 2 closed',
    ]);
    expect(order.slice(3)).toEqual(['in-flight answered', 'drained']);
    expect([silent, half, headersOnly].map((c) => c.events)).toEqual([[], [], []]);
    expect(logs.text).not.toContain('grace period over');
  });
});
