import { execFileSync } from 'node:child_process';
import request from 'supertest';
import { accountTag } from '../../src/ids';
import { describeRedis, uniquePrefix } from '../helpers/redis';
import { ownCluster, type OwnCluster, type OwnRedis } from '../helpers/redis-server';
import { expectEachRunAndChargedOnce, submitThrough, until } from '../helpers/failover-load';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/**
 * Past one Redis, Cluster mode: a cluster of its own (3 masters, 3 replicas, node timeout 1 s), Genway given its
 * nodes (store.clusterNodes). Tasks are submitted and run while the masters holding the account's and the {keys}
 * slot are killed with SIGKILL and their replicas take over: every acknowledged task finishes and is charged
 * once, nothing else is. Run twice: once sparing the master of BullMQ's slot (every job queue), once killing it
 * with the account's.
 */
const TASKS = 120;

const scenarios: [string, boolean][] = [
  ["BullMQ's master spared", false],
  ["BullMQ's master killed with the account's", true],
];

describeRedis.each(scenarios)('Cluster mode: a master killed under load (%s)', (_name, killBullMaster) => {
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

  test("acknowledged tasks survive SIGKILL of the masters of the account's and the keys' slots: each finishes and is charged once", async () => {
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
    // The account's slot (money, tasks) loses its master, then the {keys} slot (API keys, the key-event stream every
    // replica follows) when another master holds it. Two failovers in a row: 2 of the 3 masters left still make the
    // majority that promotes. In the second run the account's master is also BullMQ's (its workers' blocked reads
    // and job scripts are on it: they must follow the promoted replica, src/store/redis/slot-master.ts).
    const bullSlot = slotOf(`{${prefix}:bull}`);
    const keysSlot = slotOf('{keys}');
    const bullMaster = await cluster.masterOf(bullSlot);
    const victim = killBullMaster ? bullMaster : cluster.masters.find((m) => m !== bullMaster)!;
    const keysMaster = await cluster.masterOf(keysSlot);
    let account = await fundedKey(h.services, 100);
    while ((await cluster.masterOf(slotOf(`{${accountTag(account.accountId)}}`))) !== victim)
      account = await fundedKey(h.services, 100);
    const { auth, accountId, keyId } = account;
    expect(
      (await request(other.app).get('/api/v1/apikeys/current-balance').set('Authorization', auth)).status,
    ).toBe(200);
    const slot = slotOf(`{${accountTag(accountId)}}`);
    const failOver = async (master: OwnRedis, slotHeld: number): Promise<OwnRedis> => {
      await master.kill('SIGKILL');
      let promoted: OwnRedis | undefined;
      await until(
        async () => {
          promoted = await cluster.masterOf(slotHeld).catch(() => undefined);
          return promoted !== undefined && promoted !== master;
        },
        20_000,
        `a replica to take over slot ${slotHeld}`,
      );
      return promoted!;
    };
    const failovers: string[] = [];
    const outcome = await submitThrough(h.app, auth, TASKS, async () => {
      await new Promise((r) => setTimeout(r, 800));
      failovers.push(`${victim.port} to ${(await failOver(victim, slot)).port}`);
      if (keysMaster !== victim && keysMaster !== bullMaster)
        failovers.push(`${keysMaster.port} to ${(await failOver(keysMaster, keysSlot)).port}`);
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
        `the failover of ${failovers.join(' and ')} (BullMQ's slot ${bullSlot} ${killBullMaster ? 'on it' : 'spared'})\n`,
    );
  }, 120_000);
});
