/**
 * The vendor stand-in for bench:gateway, run as its own process so its CPU never counts against a proxy:
 * - POST /v1/messages, JSON body: a fixed ~600-byte messages-format answer with usage;
 * - `"bench":"sse"` in the body: five events, each after a 50 ms wait;
 * - `"bench":"big"` in the body: BIG_BYTES of event stream (deterministic, see bigChunk), with backpressure.
 * Prints its port on stdout once listening.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BIG_BYTES, bigChunk, JSON_ANSWER, SSE_EVENT_GAP_MS, sseEvent } from './upstream-data';

const server = http.createServer({ noDelay: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    if (body.includes('"bench":"sse"')) return sse(res);
    if (body.includes('"bench":"big"')) return big(res);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': JSON_ANSWER.length });
    res.end(JSON_ANSWER);
  });
});

function sse(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i === 5) return void res.end();
    res.write(sseEvent(i++));
    setTimeout(next, SSE_EVENT_GAP_MS);
  };
  setTimeout(next, SSE_EVENT_GAP_MS);
}

function big(res: http.ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = bigChunk();
  let sent = 0;
  const pump = () => {
    while (sent < BIG_BYTES) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
