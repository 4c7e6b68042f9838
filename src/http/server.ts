import http from 'node:http';
import type { Socket } from 'node:net';
import type { App } from '../app';
import type { Config } from '../config';
import type { Logger } from '../observability/logger';

export type ServerOptions = Pick<
  Config['server'],
  'host' | 'port' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections'
>;

/**
 * After answering a request whose body has not all arrived (a 401, 413 or 429 sent before reading the upload), the
 * connection is half-closed and the rest of the body read and dropped for at most this long, then cut: the client
 * gets the answer rather than a reset, and a client that sends a byte a second cannot hold the connection.
 */
const LINGER_MS = 2_000;

/** Whether the request has a body that has not all arrived (a request without one is complete only after 'request'). */
function bodyPending(req: http.IncomingMessage): boolean {
  return (
    !req.complete &&
    (req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0')
  );
}

/** Node's destroySoon, but the rest of the body is read and dropped for LINGER_MS before the connection is cut. */
function lingeringClose(this: Socket): void {
  if (this.writable) this.end();
  setTimeout(() => this.destroy(), LINGER_MS).unref();
}

const writeHead = http.ServerResponse.prototype.writeHead;
/**
 * `writeHead` for responses that may start before their request's body has all arrived: such a response says
 * `Connection: close` (so no client sends its next request down a connection about to close) and the connection is
 * closed after it, lingering. Checked once per response, as its head is written: a body forwarded whole before the
 * vendor answers costs one boolean. Installed on the server's responses and on Express's (which swaps the prototype).
 */
export const closingWriteHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
  if (bodyPending(this.req)) {
    this.shouldKeepAlive = false; // Node then sends Connection: close and calls destroySoon after the answer
    this.req.socket.destroySoon = lingeringClose;
  }
  return writeHead.apply(this, args);
} as typeof writeHead;

class Response extends http.ServerResponse {}
Response.prototype.writeHead = closingWriteHead;

/** How often Node sweeps connections for the headers and request timeouts (its default, 30 s, is coarser than them). */
const TIMEOUT_SWEEP_MS = 1_000;

export interface RunningServer {
  server: http.Server;
  port: number;
  /**
   * Stops accepting connections and at once closes every connection not serving a request (idle keep-alive, nothing
   * sent yet, half a request line); lets in-flight requests, streams and WebSockets finish for up to `graceMs`,
   * closing each connection as its request ends; then cuts whatever is left, upgraded connections included.
   */
  drain(graceMs: number): Promise<void>;
}

export async function listen(app: App, options: ServerOptions, logger: Logger): Promise<RunningServer> {
  const { host, port } = options;
  // Node's request timeout covers receiving the request only: streamed answers are governed by the gateway's idle
  // timeout, never by a total.
  const server = http.createServer(
    {
      noDelay: true,
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_SWEEP_MS,
      ServerResponse: Response,
    },
    app,
  );
  server.maxConnections = options.maxConnections;
  let dropped = 0;
  server.on('drop', () => {
    // One line per burst, not per connection: a flood must not become a flood of log lines.
    if (dropped++ === 0) {
      setTimeout(() => {
        logger.warn(
          { dropped, maxConnections: options.maxConnections },
          'connection cap reached; connections closed',
        );
        dropped = 0;
      }, 1_000).unref();
    }
  });
  server.on('upgrade', app.upgrade);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;

  // Every connection, and how many of its requests have not finished: Node's own idle sweep counts a connection
  // that has sent half a request line as busy, and upgraded (WebSocket) connections as none of its own.
  const sockets = new Set<Socket>();
  const inFlight = new Map<Socket, number>();
  const upgraded = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    // Read once, so Node keeps it: a request-log row is made after its call (src/logs/writer.ts), and a socket closed
    // by then answers its address only if it was read while open.
    void socket.remoteAddress;
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      inFlight.delete(socket);
      upgraded.delete(socket);
    });
  });
  let draining = false;
  // One listener function for every response (no closure per request: this runs on the hot path).
  function ended(this: http.ServerResponse): void {
    const socket = this.req.socket;
    const left = (inFlight.get(socket) ?? 1) - 1;
    if (left > 0) inFlight.set(socket, left);
    else inFlight.delete(socket);
    if (draining && left <= 0 && !upgraded.has(socket)) socket.destroy();
  }
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight.set(req.socket, (inFlight.get(req.socket) ?? 0) + 1);
    res.on('close', ended); // a response closes once
  });
  server.on('upgrade', (req: http.IncomingMessage) => upgraded.add(req.socket));

  const drain = (graceMs: number) =>
    new Promise<void>((resolve) => {
      draining = true;
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const socket of sockets) {
        if (!inFlight.has(socket) && !upgraded.has(socket)) socket.destroy();
      }
      const deadline = setTimeout(() => {
        logger.warn({ graceMs }, 'shutdown grace period over; closing remaining connections');
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      void closed.then(() => {
        clearTimeout(deadline);
        resolve();
      });
    });

  return { server, port: boundPort, drain };
}
