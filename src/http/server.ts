import http from 'node:http';
import type { App } from '../app';
import type { Logger } from '../observability/logger';

export interface RunningServer {
  server: http.Server;
  port: number;
  /**
   * Stops accepting connections, lets in-flight requests (streams too) finish for up to `graceMs`,
   * then cuts whatever is left.
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

  const drain = (graceMs: number) =>
    new Promise<void>((resolve) => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      // Keep-alive sockets that go idle after their last response would hold close() open: shut them as they idle.
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => {
        logger.warn({ graceMs }, 'shutdown grace period over; closing remaining connections');
        server.closeAllConnections();
      }, graceMs);
      server.closeIdleConnections();
      void closed.then(() => {
        clearInterval(idleSweep);
        clearTimeout(deadline);
        resolve();
      });
    });

  return { server, port: boundPort, drain };
}
