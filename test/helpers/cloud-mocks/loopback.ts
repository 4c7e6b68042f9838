import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Received } from '../mock-vendor';
import { readMarkers } from './answers';

/** What a cloud mock received (exactly, bytes included, as MockVendor records it) and what it made of the caller. */
export interface CloudReceived extends Received {
  /** '1.1', or '2.0' when the client spoke HTTP/2 without TLS (the AWS SDK's Bedrock runtime client does). */
  httpVersion: string;
  /** The path as it came on the wire (percent-encoding untouched), without the query. */
  path: string;
  /** Whether the request's credentials held up: a signature recomputed, a key or a live token found. */
  verified: boolean;
  /** Which credential it carried: 'sigv4' | 'apiKey' (Bedrock), 'oauth' | 'jwt-bearer' (Vertex), 'api-key' | 'bearer' (Azure); null when none. */
  auth: string | null;
  /** Why verification failed, in the service's own words. */
  authError?: string;
}

/** The part of a response a handler writes to: node:http's and node:http2's responses both have it. */
export interface MockReply {
  writeHead(status: number, headers?: Record<string, string | number | string[]>): unknown;
  write(chunk: string | Uint8Array): boolean;
  end(chunk?: string | Uint8Array): unknown;
  /** Drops the connection (HTTP/1.1) or resets the stream (HTTP/2). */
  destroy(): unknown;
  readonly headersSent: boolean;
}

export type CloudHandler = (req: CloudReceived, res: MockReply) => unknown;

/** A credential check's outcome: accepted as `auth`, or refused with the service's answer. */
export type Verdict =
  | { ok: true; auth: string }
  | { ok: false; auth: string | null; reason: string; reject: (res: MockReply) => void };

type IncomingRequest = http.IncomingMessage | http2.Http2ServerRequest;

const H2_PREFACE = 'PRI * HTTP/2.0';

/**
 * One loopback port speaking HTTP/1.1 and cleartext HTTP/2 (by the connection's first bytes), recording every request
 * and answering it through: the service's credential check, then a queued handler if any, then the service's own
 * answer. Each cloud mock is one subclass.
 */
export abstract class LoopbackService {
  readonly received: CloudReceived[] = [];
  url = '';
  private readonly handlers: CloudHandler[] = [];
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  private sequence = 0;

  constructor() {
    const http1 = http.createServer({ noDelay: true }, (req, res) => this.accept(req, res));
    const http2c = http2.createServer((req, res) => this.accept(req, res));
    this.server = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.setNoDelay(true);
      socket.once('readable', () => {
        const head = socket.read() as Buffer | null;
        if (!head) return void socket.destroy();
        socket.unshift(head);
        const server = head.toString('latin1', 0, H2_PREFACE.length) === H2_PREFACE ? http2c : http1;
        server.emit('connection', socket);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** MockVendor's name for close(). */
  stop(): Promise<void> {
    return this.close();
  }

  /**
   * The next request whose credentials verify is answered by `handler` (queued, one per request). Requests refused
   * for their credentials are answered as the service would and leave the queue alone.
   */
  next(handler: CloudHandler): void {
    this.handlers.push(handler);
  }

  last(): CloudReceived {
    const r = this.received[this.received.length - 1];
    if (!r) throw new Error('the mock received nothing');
    return r;
  }

  /** The service's credential check for one API request. */
  protected abstract authenticate(req: CloudReceived): Verdict | Promise<Verdict>;

  /** The service's own answer to an API request whose credentials verified. */
  protected abstract answer(req: CloudReceived, res: MockReply): unknown;

  /** A number that grows by one per call: ids and request ids stay the same from run to run. */
  protected nextSequence(): number {
    return ++this.sequence;
  }

  /** Credential check, then a queued handler or the service's answer; a subclass may take some paths first. */
  protected async handle(req: CloudReceived, res: MockReply): Promise<void> {
    const verdict = await this.authenticate(req);
    req.verified = verdict.ok;
    req.auth = verdict.auth;
    if (!verdict.ok) {
      req.authError = verdict.reason;
      return verdict.reject(res);
    }
    const delay = readMarkers(req.body.toString('utf8')).delayMs;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const handler = this.handlers.shift();
    await (handler ? handler(req, res) : this.answer(req, res));
  }

  private accept(
    req: IncomingRequest,
    res: MockReply & { once(event: 'close', cb: () => void): unknown },
  ): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = req.url ?? '/';
      const received: CloudReceived = {
        method: req.method ?? 'GET',
        url,
        path: url.split('?')[0],
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        closed: new Promise((resolve) => res.once('close', () => resolve())),
        httpVersion: req.httpVersion,
        verified: false,
        auth: null,
      };
      this.received.push(received);
      this.handle(received, res).catch(() => res.destroy());
    });
  }
}

/** A JSON answer with its length. */
export function sendJson(
  res: MockReply,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    ...headers,
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The value of a header as one string (node joins repeated headers with ', '). */
export function header(req: CloudReceived, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The request body as JSON, or undefined when it is not a JSON object. */
export function jsonBody(req: CloudReceived): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(req.body.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Writes stream pieces one write each, so that a client sees them arrive as separate chunks. */
export async function writeInPieces(res: MockReply, pieces: (string | Uint8Array)[]): Promise<void> {
  for (const piece of pieces) {
    res.write(piece);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
