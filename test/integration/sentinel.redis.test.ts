import { Redis } from 'ioredis';
import { describeRedis } from '../helpers/redis';
import { ownRedis, ownSentinel, type OwnRedis, type OwnSentinel } from '../helpers/redis-server';
import { expectEachRunAndChargedOnce, submitThrough, until } from '../helpers/failover-load';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/**
 * Past one Redis, Sentinel mode: a master and a replica on loopback, two sentinels, and Genway configured with the
 * sentinels only (store.sentinels). Tasks are submitted and run while the sentinels fail the master over to the
 * replica: every acknowledged task finishes, is charged once, and Genway follows the new master.
 */
const TASKS = 120;

describeRedis('Sentinel mode: a failover under load', () => {
  let master: OwnRedis;
  let replica: OwnRedis;
  const sentinels: OwnSentinel[] = [];
  let h: TestHarness | undefined;
  beforeAll(async () => {
    master = await ownRedis();
    replica = await ownRedis(['--replicaof', '127.0.0.1', String(master.port)]);
    sentinels.push(await ownSentinel(master.port), await ownSentinel(master.port));
  });
  afterAll(async () => {
    await h?.close();
    for (const s of sentinels) await s.stop();
    await replica?.stop();
    await master?.stop();
  });

  test('acknowledged tasks survive SENTINEL FAILOVER: each finishes and is charged once', async () => {
    const sentinel = new Redis({ host: '127.0.0.1', port: sentinels[0].port });
    try {
      // The sentinels know the replica and it is in sync before the failover is asked for.
      await until(
        async () => {
          const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', 'mymaster')) as string[][];
          return replicas.some((r) => r.join(' ').includes('master-link-status ok'));
        },
        15_000,
        'the sentinels to see the replica in sync',
      );
      h = createHarness({
        redis: true,
        overlay: {
          // The URL's host is not used in Sentinel mode: the master is found through the sentinels.
          store: { redisUrl: 'redis://unused.invalid:6379', sentinels: sentinels.map((s) => s.address) },
          sandbox: { delayMs: 300 },
          rateLimits: { default: { ratePerSec: 10_000, burst: 10_000 } },
        },
      });
      const { auth, accountId } = await fundedKey(h.services, 100);
      const outcome = await submitThrough(h.app, auth, TASKS, async () => {
        await new Promise((r) => setTimeout(r, 800));
        await sentinel.call('SENTINEL', 'FAILOVER', 'mymaster');
        await until(
          async () =>
            ((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster')) as string[])[1] ===
            String(replica.port),
          15_000,
          'the replica to become master',
        );
      });
      const { acknowledged, refused } = outcome;
      await expectEachRunAndChargedOnce(h, auth, accountId, TASKS, outcome);

      // Genway writes to the new master; the old one is now its replica.
      const promoted = new Redis({ host: '127.0.0.1', port: replica.port });
      expect(await promoted.info('replication')).toContain('role:master');
      promoted.disconnect();
      // The sentinels turn the old master into a replica of the new one (they do it shortly after the switch).
      const demoted = new Redis({ host: '127.0.0.1', port: master.port });
      try {
        await until(
          async () => (await demoted.info('replication')).includes('role:slave'),
          15_000,
          'the old master to follow',
        );
      } finally {
        demoted.disconnect();
      }
      process.stdout.write(
        `sentinel: ${acknowledged.length} acknowledged, ${refused.length} refused (${refused.join(',')}) across the failover\n`,
      );
    } finally {
      sentinel.disconnect();
    }
  }, 90_000);
});
