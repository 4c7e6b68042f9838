import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback port nothing listens on (bound, read, released): an unreachable vendor, or a port to take next. */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}
