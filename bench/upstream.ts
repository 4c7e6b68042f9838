/**
 * The vendor stand-in for bench:gateway, run as its own process so its CPU never counts against a proxy:
 * - POST /v1/messages, JSON body: a fixed ~600-byte messages-format answer with usage;
 * - POST /v1/chat/completions: the same size of chat-completions answer;
 * - POST /v1/files: an upload, read to its end (and hashed), answered with its byte count and SHA-256;
 * - `"bench":"sse"` in the body: five events, each after a 50 ms wait;
 * - `"bench":"big"` in the body: BIG_BYTES of event stream (deterministic, see bigChunk), with backpressure;
 * - a streamed call (`"stream":true`) whose text holds `[bench:events=N]`: a whole stream in the format of the path
 *   (messages events, or chat completions chunks with the usage chunk when asked), N text deltas written one by one;
 *   `[bench:paced]`: the same with its first text delta SSE_EVENT_GAP_MS after the stream's head. A marker in the text
 *   reaches the stand-in through a translation (a field of its own would be refused as untranslatable).
 * Prints its port on stdout once listening.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import {
  BIG_BYTES,
  bigChunk,
  CHAT_ANSWER,
  formatStream,
  JSON_ANSWER,
  SSE_EVENT_GAP_MS,
  sseEvent,
} from './upstream-data';

const server = http.createServer({ noDelay: true }, (req, res) => {
  if (req.url === '/v1/files') return upload(req, res);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    if (body.includes('"bench":"sse"')) return sse(res);
    if (body.includes('"bench":"big"')) return big(res);
    const events = /\[bench:events=(\d+)\]/.exec(body);
    if (events || body.includes('[bench:paced]')) {
      const chat = req.url === '/v1/chat/completions';
      const usage = chat && /"include_usage"\s*:\s*true/.test(body);
      return formatted(
        res,
        formatStream(chat ? 'chat' : 'messages', events ? Number(events[1]) : 5, usage),
        !events,
      );
    }
    const answer = req.url === '/v1/chat/completions' ? CHAT_ANSWER : JSON_ANSWER;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});

function upload(req: http.IncomingMessage, res: http.ServerResponse): void {
  const hash = createHash('sha256');
  let bytes = 0;
  req.on('data', (c: Buffer) => {
    bytes += c.length;
    hash.update(c);
  });
  req.on('end', () => {
    const body = JSON.stringify({ id: 'file-bench', bytes, sha256: hash.digest('hex') });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

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

/** A stream's frames one write each (a turn of the event loop apart), the first text delta late when paced. */
function formatted(
  res: http.ServerResponse,
  stream: { head: string[]; deltas: string[]; tail: string[] },
  paced: boolean,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const frames = [...stream.deltas, ...stream.tail];
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i === frames.length) return void res.end();
    res.write(frames[i++]);
    setImmediate(next);
  };
  res.write(stream.head.join(''));
  if (paced) setTimeout(next, SSE_EVENT_GAP_MS);
  else setImmediate(next);
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
