import http from 'node:http';

export interface Received {
  eventId: string;
  timestamp: string;
  signature: string;
  headers: http.IncomingHttpHeaders;
  rawBody: Buffer;
  at: number;
}

/**
 * A real HTTP receiver on loopback that records every request and answers with the status `respond` picks for the
 * n-th request (0-based), e.g. fail three times then accept.
 */
export async function startReceiver(
  respond: (
    n: number,
    req: http.IncomingMessage,
  ) => number | { status: number; headers?: Record<string, string> } = () => 200,
) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({
        eventId: String(req.headers['x-genway-event-id']),
        timestamp: String(req.headers['x-genway-timestamp']),
        signature: String(req.headers['x-genway-signature']),
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        at: Date.now(),
      });
      const answer = respond(n, req);
      const { status, headers } = typeof answer === 'number' ? { status: answer, headers: {} } : answer;
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    received,
    url: `http://127.0.0.1:${port}/hook`,
    async waitFor(count: number, timeoutMs = 10_000) {
      const start = Date.now();
      while (received.length < count) {
        if (Date.now() - start > timeoutMs)
          throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return received;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
