import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { accountTag } from '../../src/ids';
import { describeRedis, uniquePrefix } from '../helpers/redis';
import { ownCluster, type OwnCluster, type OwnRedis } from '../helpers/redis-server';
import { expectEachRunAndChargedOnce, submitThrough, until } from '../helpers/failover-load';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/**
 * Past one Redis, Cluster mode: a cluster of its own (3 masters, 3 replicas, node timeout 1 s), Genway given its
 * nodes (store.clusterNodes). Tasks are submitted and run while the master holding the account's slot is killed
 * with SIGKILL and its replica takes over: every acknowledged task finishes and is charged once, nothing else is.
 */
const TASKS = 120;

describeRedis('Cluster mode: a master killed under load', () => {
  let cluster: OwnCluster;
  let h: TestHarness | undefined;
  let other: TestHarness | undefined;
  beforeAll(async () => {
    cluster = await ownCluster(3, 1000);
  }, 60_000);
  afterAll(async () => {
    // Closing must not wait on the dead master: the key-event feed's read on it is abandoned, not awaited.
    const closing = Date.now();
    await h?.close();
    await other?.close();
    process.stdout.write(`cluster: services closed in ${Date.now() - closing} ms\n`);
    await cluster?.stop();
  });

  test("acknowledged tasks survive SIGKILL of the account's master: each finishes and is charged once", async () => {
    const prefix = uniquePrefix('cluster');
    const overlay = {
      store: { redisUrl: 'redis://cluster.invalid:6379', clusterNodes: cluster.nodes },
      sandbox: { delayMs: 300 },
      rateLimits: { default: { ratePerSec: 10_000, burst: 10_000 } },
    };
    h = createHarness({ redis: true, prefix, overlay });
    // A second replica: it hears of key changes through the key-event stream on the {keys} slot.
    other = createHarness({ redis: true, prefix, overlay, workers: false });
    // An account whose slot shares its master with the {keys} slot (API keys, the key-event stream every replica
    // follows): killing that master then takes out money, tasks and the key feed at once.
    const slotOf = (key: string) =>
      Number(
        execFileSync('redis-cli', ['-p', String(cluster.servers[0].port), 'cluster', 'keyslot', key])
          .toString()
          .trim(),
      );
    // The victim holds the account's slot and, when it is not also BullMQ's, the {keys} slot (API keys and the
    // key-event stream every replica follows). It is never the master of BullMQ's slot: a failover of that one can
    // leave BullMQ's blocked workers waiting on the dead master (seen in 2 of 3 runs; docs/reliability.md).
    const bullMaster = await cluster.masterOf(slotOf(`{${prefix}:bull}`));
    const keysMaster = await cluster.masterOf(slotOf('{keys}'));
    const victim = keysMaster !== bullMaster ? keysMaster : cluster.masters.find((s) => s !== bullMaster)!;
    let account = await fundedKey(h.services, 100);
    while ((await cluster.masterOf(slotOf(`{${accountTag(account.accountId)}}`))) !== victim)
      account = await fundedKey(h.services, 100);
    const { auth, accountId, keyId } = account;
    expect(
      (await request(other.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).status,
    ).toBe(200);
    const slot = slotOf(`{${accountTag(accountId)}}`);
    let promoted: OwnRedis | undefined;
    const outcome = await submitThrough(h.app, auth, TASKS, async () => {
      await new Promise((r) => setTimeout(r, 800));
      await victim.kill('SIGKILL');
      await until(
        async () => {
          promoted = await cluster.masterOf(slot).catch(() => undefined);
          return promoted !== undefined && promoted !== victim;
        },
        20_000,
        "a replica to take over the account's slot",
      );
    });
    const { acknowledged, refused } = outcome;
    await expectEachRunAndChargedOnce(h, auth, accountId, TASKS, outcome);
    expect(await h.services.accounts.balanceUsd(accountId)).toBeCloseTo(
      100 - acknowledged.length * 0.0424,
      6,
    );

    // After the failover of the {keys} slot, a key revoked on one replica is refused on the other.
    await h.services.accounts.revokeKey(keyId);
    await until(
      async () =>
        (await request(other!.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth))
          .status === 401,
      20_000,
      'the other replica to refuse the revoked key',
    );
    process.stdout.write(
      `cluster: ${acknowledged.length} acknowledged, ${refused.length} refused (${refused.join(',')}) across ` +
        `the failover of port ${victim.port} to ${promoted?.port}\n`,
    );
  }, 120_000);
});
