import http from 'node:http';
import type { Socket } from 'node:net';
import type { App } from '../app';
import type { Logger } from '../observability/logger';

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

export async function listen(app: App, host: string, port: number, logger: Logger): Promise<RunningServer> {
  const server = http.createServer({ noDelay: true }, app);
  server.on('upgrade', app.upgrade);
  // Long-lived streams are governed by the gateway's idle timeout, not by a total request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
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
