/**
 * The physical limit of a Node proxy, for bench:gateway: node:http in, node:http out over a keep-alive pool,
 * the key header swapped, bodies piped both ways. Nothing else: no auth, limits, metrics or logs.
 * Usage: node bare-proxy.js <upstream port>. Prints its port once listening.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const upstreamPort = Number(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo' });

const server = http.createServer({ noDelay: true }, (req, res) => {
  const headers = { ...req.headers, 'x-api-key': 'sk-bench-vendor' };
  if (headers.authorization) headers.authorization = 'Bearer sk-bench-vendor';
  delete headers.connection;
  const up = http.request(
    { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers, agent },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    },
  );
  up.setNoDelay(true);
  up.on('error', () => res.destroy());
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});

// Exit normally on a signal, so a --cpu-prof run writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
