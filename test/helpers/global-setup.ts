import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { ownCluster, type OwnCluster } from './redis-server';

const DEFAULT_URL = 'redis://127.0.0.1:6379';

function ping(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * Finds the Redis the Redis-backed tests use. With GENWAY_REQUIRE_REDIS=1 (CI) a missing Redis fails the run;
 * otherwise those tests skip, loudly.
 */
export default async function globalSetup(): Promise<void> {
  const url = process.env.GENWAY_TEST_REDIS_URL || DEFAULT_URL;
  if (await ping(url)) {
    process.env.GENWAY_TEST_REDIS_URL = url;
    await startCluster();
    return;
  }
  if (process.env.GENWAY_REQUIRE_REDIS === '1') {
    throw new Error(`GENWAY_REQUIRE_REDIS=1 but no Redis answers at ${url}`);
  }
  delete process.env.GENWAY_TEST_REDIS_URL;
  const bar = '!'.repeat(78);
  process.stderr.write(
    `\n${bar}\n!! NO REDIS at ${url}: every Redis-backed test will be SKIPPED.\n` +
      `!! Start redis-server, or run .ci/run, to test the clustered mode.\n${bar}\n\n`,
  );
}

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A Redis Cluster (3 masters, 3 replicas) on loopback ports for the whole run, when Debian's redis-server is here:
 * the store and scheduler contract suites run against it too (GENWAY_TEST_REDIS_CLUSTER). Stopped by global-teardown.
 */
async function startCluster(): Promise<void> {
  if (process.env.GENWAY_TEST_REDIS_CLUSTER) return;
  if (!hasRedisServer()) {
    if (process.env.GENWAY_REQUIRE_REDIS === '1')
      throw new Error('GENWAY_REQUIRE_REDIS=1 but redis-server is missing');
    process.stderr.write('\n!! redis-server not installed: the Redis Cluster suites will be SKIPPED.\n\n');
    return;
  }
  const cluster = await ownCluster();
  (globalThis as { genwayTestCluster?: OwnCluster }).genwayTestCluster = cluster;
  process.env.GENWAY_TEST_REDIS_CLUSTER = cluster.nodes.join(',');
}
