import net from 'node:net';

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
