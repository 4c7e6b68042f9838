import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { redisKeys } from '../../src/store/keys';
import type { LedgerEntry } from '../../src/accounts/store';
import {
  adminAccount,
  listeningPort,
  redisProcessEnv,
  startGenway,
  type GenwayProcess,
} from '../helpers/process';
import { describeRedis } from '../helpers/redis';
import { ownRedis, type OwnRedis } from '../helpers/redis-server';

/**
 * The fault suite: tasks submitted under load while a worker is killed with SIGKILL (and restarted) and Redis is
 * killed with SIGKILL (and restarted from its AOF). Then every acknowledged task must reach one terminal state, be
 * charged exactly once (and refunded exactly once when it failed), and have its callback delivered: nothing lost,
 * no money doubled. Deliveries are at-least-once; repeats carry the same event id and body.
 */
const TASKS = 80;
const FAIL_EVERY = 5;

interface Submitted {
  taskId: string;
  fails: boolean;
}

describeRedis('faults: worker SIGKILL and Redis SIGKILL under load (Redis mode)', () => {
  let redis: OwnRedis;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-faults-'));
  beforeAll(async () => {
    redis = await ownRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('no acknowledged task, charge, refund or callback is lost or doubled', async () => {
    const callbacks: { eventId: string; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push({ eventId: String(req.headers['x-genway-event-id']), body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/cb`;

    const prefix = `genway-test:faults:${process.pid}`;
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        store: { prefix },
        sandbox: { delayMs: 400 },
        security: { allowPrivateTargets: true },
        rateLimits: { default: { ratePerSec: 10_000, burst: 10_000 } },
        callbacks: { retryDelaysMs: [500, 1000, 2000, 4000] },
        jobs: { lockDurationMs: 2000, stalledIntervalMs: 1000 },
        gateway: { chargeJournalDir: path.join(dir, 'charges') },
      }),
    );
    const env = { ...redisProcessEnv(redis.url, config), LOG_LEVEL: 'warn' };
    const processes: GenwayProcess[] = [];
    const start = (args: string[]) => {
      const p = startGenway(args, { ...env, LOG_LEVEL: args[0] === 'serve' ? 'info' : 'warn' });
      processes.push(p);
      return p;
    };
    const inspect = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    inspect.on('error', () => undefined);
    try {
      const api = start(['serve', '--no-worker']);
      const base = `http://127.0.0.1:${await listeningPort(api)}`;
      const { accountId, key } = await adminAccount(base, 100);
      let workerA = start(['worker']);
      start(['worker']);

      // The load: TASKS submits, 4 at a time, paced over about 6 s; faults land in the middle of it.
      const acknowledged: Submitted[] = [];
      const refused: number[] = [];
      let next = 0;
      const submitter = async () => {
        while (next < TASKS) {
          const i = next++;
          const fails = i % FAIL_EVERY === 0;
          try {
            const res = await fetch(`${base}/api/v1/generateTask/image-gen`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({
                request_type: 'callback',
                callback_url: callbackUrl,
                input: {
                  mode: 'text-to-image',
                  prompt: `${fails ? '[sandbox:fail=CONTENT_VIOLATION] ' : ''}task ${i}`,
                },
              }),
            });
            const body = (await res.json()) as { data: { taskId: string } | null };
            if (res.status === 200) acknowledged.push({ taskId: body.data!.taskId, fails });
            else refused.push(res.status);
          } catch {
            refused.push(0);
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      };
      const faults = (async () => {
        await new Promise((r) => setTimeout(r, 1500));
        workerA.kill('SIGKILL');
        await workerA.exited;
        workerA = start(['worker']);
        await new Promise((r) => setTimeout(r, 1500));
        await redis.kill('SIGKILL');
        await new Promise((r) => setTimeout(r, 1000));
        await redis.start();
      })();
      await Promise.all([submitter(), submitter(), submitter(), submitter(), faults]);

      // Every acknowledged task reaches its one terminal state.
      const states = new Map<string, string>();
      const deadline = Date.now() + 30_000;
      for (const { taskId } of acknowledged) {
        for (;;) {
          const res = await fetch(`${base}/api/v1/statusTask/image-gen?taskId=${taskId}`, {
            headers: { authorization: `Bearer ${key}` },
          });
          const state =
            res.status === 200 ? ((await res.json()) as { data: { state: string } }).data.state : '';
          if (state === 'success' || state === 'failed') {
            states.set(taskId, state);
            break;
          }
          if (Date.now() > deadline) throw new Error(`task ${taskId} stuck in ${state || res.status}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(acknowledged.length).toBeGreaterThan(TASKS / 2);
      expect(refused.every((s) => s === 503 || s === 0)).toBe(true);
      expect(acknowledged.map((t) => states.get(t.taskId))).toEqual(
        acknowledged.map((t) => (t.fails ? 'failed' : 'success')),
      );

      // Money: one charge per acknowledged task, one refund per failed one, and the balance is their sum.
      const ledger = (await inspect.lrange(redisKeys(prefix).ledger(accountId), 0, -1)).map(
        (e) => JSON.parse(e) as LedgerEntry,
      );
      const count = (kind: string, taskId: string) =>
        ledger.filter((e) => e.kind === kind && e.reference === `task:${taskId}`).length;
      expect(acknowledged.map((t) => [count('charge', t.taskId), count('refund', t.taskId)])).toEqual(
        acknowledged.map((t) => [1, t.fails ? 1 : 0]),
      );
      const charges = ledger.filter((e) => e.kind === 'charge').length;
      expect(charges).toBe(acknowledged.length); // nothing charged for a submit that was not acknowledged
      const net = ledger.reduce(
        (sum, e) => sum + (e.kind === 'charge' ? -e.amountMicros : e.amountMicros),
        0,
      );
      const balance = Number(await inspect.hget(redisKeys(prefix).account(accountId), 'balance'));
      expect(balance).toBe(net);

      // Callbacks: every task's arrives (at-least-once); a repeat is the same event with the same body.
      const deliveredBy = Date.now() + 20_000;
      const byTask = () => {
        const seen = new Map<string, Set<string>>();
        for (const c of callbacks) {
          const taskId = (JSON.parse(c.body) as { data: { taskId: string } }).data.taskId;
          if (!seen.has(taskId)) seen.set(taskId, new Set());
          seen.get(taskId)!.add(`${c.eventId} ${c.body}`);
        }
        return seen;
      };
      while (acknowledged.some((t) => !byTask().has(t.taskId)) && Date.now() < deliveredBy) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const seen = byTask();
      expect(acknowledged.filter((t) => !seen.has(t.taskId)).map((t) => t.taskId)).toEqual([]);
      expect([...seen.values()].filter((variants) => variants.size > 1)).toEqual([]);
      process.stdout.write(
        `faults: ${acknowledged.length} acknowledged, ${refused.length} refused during the outage (${[...new Set(refused)].join(',')}), ` +
          `${callbacks.length} callbacks for ${seen.size} tasks, ${charges} charges, ` +
          `${ledger.filter((e) => e.kind === 'refund').length} refunds\n`,
      );
    } finally {
      for (const p of processes) p.kill('SIGKILL');
      await Promise.all(processes.map((p) => p.exited));
      inspect.disconnect();
      receiver.closeAllConnections();
      receiver.close();
    }
  }, 90_000);
});
