import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
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
  ensureBuild();
  findChromium();
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

/**
 * Every suite that starts Genway runs `node dist/main.js` (test/helpers/process.ts): one build for the whole run,
 * made here when the tree changed since the last (a few ms when it did not, so `npx jest <file>` works alone too).
 */
function ensureBuild(): void {
  execFileSync(process.execPath, [path.join(__dirname, '..', '..', 'scripts', 'build.js'), '--quiet'], {
    stdio: 'inherit',
  });
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

const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/**
 * Finds the system Chromium the console's browser tests drive (Debian's `chromium`; GENWAY_TEST_CHROMIUM names
 * another). With GENWAY_REQUIRE_BROWSER=1 (CI) a missing one fails the run; otherwise those tests skip, loudly.
 */
function findChromium(): void {
  const candidates = process.env.GENWAY_TEST_CHROMIUM ? [process.env.GENWAY_TEST_CHROMIUM] : CHROMIUM_PATHS;
  const found = candidates.find((file) => fs.existsSync(file));
  if (found) {
    process.env.GENWAY_TEST_CHROMIUM = found;
    return;
  }
  if (process.env.GENWAY_REQUIRE_BROWSER === '1')
    throw new Error(`GENWAY_REQUIRE_BROWSER=1 but no Chromium at ${candidates.join(' or ')}`);
  delete process.env.GENWAY_TEST_CHROMIUM;
  const bar = '!'.repeat(78);
  process.stderr.write(
    `\n${bar}\n!! NO CHROMIUM at ${candidates.join(' or ')}: the console's browser tests will be SKIPPED.\n` +
      `!! Install Debian's chromium (apt-get install chromium), or run .ci/run.\n${bar}\n\n`,
  );
}
