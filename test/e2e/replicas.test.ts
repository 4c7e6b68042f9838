import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { verifyGenwayWebhook } from '../../examples/webhook-receiver';
import { listeningPort, startGenway, type GenwayProcess } from '../helpers/process';
import {
  describeRedis,
  dropClusterPrefix,
  dropPrefix,
  redisClusterNodes,
  redisUrl,
  uniquePrefix,
} from '../helpers/redis';

const ADMIN = 'replicas-admin-token-0123456789';
const SECRETS_KEY = 'replicas-secrets-key-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Envelope<T = unknown> {
  code: number;
  message: string;
  data: T;
}

async function call<T = unknown>(
  port: number,
  method: string,
  urlPath: string,
  { auth, body, headers = {} }: { auth?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Envelope<T> }> {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, {
    method,
    headers: {
      ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as Envelope<T> };
}

/** Where the replicas keep their state: one Redis, and a Redis Cluster (keys laid out by hash slot) when there is one. */
const targets: [string, Record<string, string>, (prefix: string) => Promise<void>][] = [
  ['one Redis', { REDIS_URL: redisUrl ?? '' }, dropPrefix],
];
if (redisClusterNodes)
  targets.push([
    'a Redis Cluster of 3 masters',
    { REDIS_URL: 'redis://cluster.invalid:6379', REDIS_CLUSTER_NODES: redisClusterNodes.join(',') },
    (prefix) => dropClusterPrefix(prefix),
  ]);

describeRedis.each(targets)(
  'two API replicas and one worker on %s act as one service',
  (_on, redisEnv, drop) => {
    const prefix = uniquePrefix('replicas');
    const procs: GenwayProcess[] = [];
    let api1: number;
    let api2: number;
    let worker: GenwayProcess;
    let receiver: http.Server;
    let receiverPort: number;
    const deliveries: { eventId: string; body: string; headers: http.IncomingHttpHeaders }[] = [];

    function start(args: string[]): GenwayProcess {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-replicas-'));
      const file = path.join(dir, 'overlay.yaml');
      fs.writeFileSync(
        file,
        [
          'security:',
          '  allowPrivateTargets: true',
          'sandbox:',
          '  delayMs: 300',
          'jobs:',
          '  lockDurationMs: 1000',
          '  stalledIntervalMs: 500',
          'webhooks:',
          '  retryDelaysMs: [100, 100, 100, 100, 100]',
        ].join('\n'),
      );
      const p = startGenway(args, {
        PORT: '0',
        ...redisEnv,
        GENWAY_STORE_PREFIX: prefix,
        GENWAY_ADMIN_TOKEN: ADMIN,
        GENWAY_SECRETS_KEY: SECRETS_KEY,
        GENWAY_CONFIG: file,
      });
      procs.push(p);
      return p;
    }

    beforeAll(async () => {
      receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          deliveries.push({ eventId: String(req.headers['x-genway-event-id']), body, headers: req.headers });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      receiverPort = (receiver.address() as { port: number }).port;
      const a = start(['serve', '--no-worker']);
      const b = start(['serve', '--no-worker']);
      worker = start(['worker']);
      [api1, api2] = await Promise.all([listeningPort(a), listeningPort(b)]);
      await worker.waitFor(/genway worker started/);
    });

    afterAll(async () => {
      for (const p of procs) p.kill('SIGKILL');
      await new Promise((r) => receiver.close(r));
      await drop(prefix);
    });

    async function account(balanceUsd: number, keyOptions: Record<string, unknown> = {}) {
      const created = await call<{ accountId: string }>(api1, 'POST', '/admin/v1/accounts', {
        auth: ADMIN,
        body: { name: 'replicas', balanceUsd },
      });
      const key = await call<{ key: string }>(
        api2,
        'POST',
        `/admin/v1/accounts/${created.body.data.accountId}/keys`,
        {
          auth: ADMIN,
          body: keyOptions,
        },
      );
      return key.body.data.key;
    }

    test('a key made on one replica works on the other, with the same balance and one shared rate limit', async () => {
      const key = await account(3, { rateLimit: { ratePerSec: 0.01, burst: 4 } });
      const statuses = [];
      for (const port of [api1, api2, api1, api2, api1, api2]) {
        const res = await call<number>(port, 'GET', '/api/v1/apikeys/current-balance', { auth: key });
        statuses.push(res.status);
        if (res.status === 200) expect(res.body.data).toBe(3);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    });

    test('a task submitted on one replica is run by the worker and reads the same on both', async () => {
      const key = await account(5);
      const submitted = await call<{ taskId: string }>(api1, 'POST', '/api/v1/generateTask/image-gen', {
        auth: key,
        body: { input: { mode: 'text-to-image', prompt: 'a fox' } },
      });
      expect(submitted.status).toBe(200);
      const taskId = submitted.body.data.taskId;
      let record: Envelope<{ state: string }> | undefined;
      for (let i = 0; i < 100; i++) {
        record = (
          await call<{ state: string }>(api2, 'GET', `/api/v1/statusTask/image-gen?taskId=${taskId}`, {
            auth: key,
          })
        ).body;
        if (record.data.state === 'success') break;
        await sleep(50);
      }
      expect(record!.data.state).toBe('success');
      const other = await call(api1, 'GET', `/api/v1/statusTask/image-gen?taskId=${taskId}`, { auth: key });
      expect(other.body).toEqual(record);
      const balance = await call<number>(api2, 'GET', '/api/v1/apikeys/current-balance', { auth: key });
      expect(balance.body.data).toBeCloseTo(5 - 0.0424, 6);
    });

    test('batch idempotency holds across replicas and each item webhook is delivered once', async () => {
      const key = await account(5);
      const secret = await call<{ secret: string; version: number }>(api1, 'GET', '/api/v1/webhooks/secret', {
        auth: key,
      });
      const body = {
        webhook_url: `http://127.0.0.1:${receiverPort}/hooks`,
        items: [0, 1, 2].map((n) => ({
          client_item_id: `c${n}`,
          idempotency_key: `replica-item-${n}`,
          input: { mode: 'text-to-image', prompt: `fox ${n}` },
        })),
      };
      const headers = { 'idempotency-key': 'replica-batch' };
      const first = await call<{ batchId: string; items: { taskId: string }[] }>(
        api1,
        'POST',
        '/api/v1/generateTask/image-gen/batches',
        { auth: key, body, headers },
      );
      const replay = await call<{ batchId: string; replayed: boolean }>(
        api2,
        'POST',
        '/api/v1/generateTask/image-gen/batches',
        { auth: key, body, headers },
      );
      expect(replay.body.data).toMatchObject({ batchId: first.body.data.batchId, replayed: true });

      const taskIds = first.body.data.items.map((i) => i.taskId);
      for (let i = 0; i < 200 && taskIds.some((t) => !deliveries.some((d) => d.body.includes(t))); i++)
        await sleep(50);
      await sleep(500); // room for any duplicate to arrive
      const mine = deliveries.filter((d) => taskIds.some((t) => d.body.includes(t)));
      expect(mine).toHaveLength(3);
      expect(new Set(mine.map((d) => d.eventId)).size).toBe(3);
      for (const d of mine) {
        const verdict = verifyGenwayWebhook({
          rawBody: Buffer.from(d.body),
          headers: d.headers,
          secrets: [secret.body.data.secret],
          now: Date.now(),
        });
        expect(verdict.ok).toBe(true);
      }
    });

    test('killing the worker mid-flight loses nothing: another worker finishes the task, billed once', async () => {
      const key = await account(5);
      const submitted = await call<{ taskId: string }>(api2, 'POST', '/api/v1/generateTask/image-gen', {
        auth: key,
        body: { input: { mode: 'text-to-image', prompt: '[sandbox:delay=1500] a fox' } },
      });
      const taskId = submitted.body.data.taskId;
      for (let i = 0; i < 100; i++) {
        const r = await call<{ state: string }>(
          api1,
          'GET',
          `/api/v1/statusTask/image-gen?taskId=${taskId}`,
          {
            auth: key,
          },
        );
        if (r.body.data.state === 'processing') break;
        await sleep(25);
      }
      worker.kill('SIGKILL');
      await worker.exited;
      worker = start(['worker']);
      let state = '';
      for (let i = 0; i < 200 && state !== 'success'; i++) {
        state = (
          await call<{ state: string }>(api1, 'GET', `/api/v1/statusTask/image-gen?taskId=${taskId}`, {
            auth: key,
          })
        ).body.data.state;
        if (state !== 'success') await sleep(50);
      }
      expect(state).toBe('success');
      const balance = await call<number>(api2, 'GET', '/api/v1/apikeys/current-balance', { auth: key });
      expect(balance.body.data).toBeCloseTo(5 - 0.0424, 6);
    });
  },
);
