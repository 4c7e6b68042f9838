/**
 * The bare pipe with undici's dispatcher out, as Genway forwards: node:http in, the body read whole (Genway reads it
 * for the model), the key header swapped, one keep-alive undici Agent to the vendor, the answer streamed back.
 * Nothing else: no auth, limits, metrics or logs. What Genway's own work costs over its choice of client, where
 * bench/bare-proxy.ts (node:http out, the baseline) also measures the client. Run with BENCH_TARGETS naming
 * `undici`. Usage: node bare-undici.js <upstream port>. Prints its port once listening.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';

const origin = `http://127.0.0.1:${Number(process.argv[2])}`;
const agent = new Agent({ keepAliveTimeout: 60_000 });
/** Hop-by-hop headers, not passed on either way. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

const server = http.createServer({ noDelay: true }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = req.rawHeaders;
    const headers: string[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toLowerCase();
      if (HOP.has(name)) continue;
      const value =
        name === 'x-api-key'
          ? 'sk-bench-vendor'
          : name === 'authorization'
            ? 'Bearer sk-bench-vendor'
            : raw[i + 1];
      headers.push(raw[i], value);
    }
    const handler: Dispatcher.DispatchHandler = {
      // A client that leaves stops the vendor's answer, as Genway and the bare pipe do.
      onConnect: (abort) => {
        res.on('close', () => {
          if (!res.writableFinished) abort(new Error('the client left'));
        });
      },
      onHeaders(status, rawHeaders, resume, statusText) {
        res.on('drain', resume);
        const out: string[] = [];
        for (let i = 0; i < rawHeaders.length; i += 2) {
          const name = rawHeaders[i].toString('latin1');
          if (!HOP.has(name.toLowerCase())) out.push(name, rawHeaders[i + 1].toString('latin1'));
        }
        res.writeHead(status, statusText, out);
        return true;
      },
      onData: (chunk) => res.write(chunk),
      onComplete: () => res.end(),
      onError: () => res.destroy(),
    };
    agent.dispatch(
      {
        origin,
        method: req.method as Dispatcher.HttpMethod,
        path: req.url!,
        headers,
        body: Buffer.concat(chunks),
      },
      handler,
    );
  });
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});

// Exit normally on a signal, so a --cpu-prof run writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
