/**
 * npm run bench:batches — a comparison, not a timed test (every loop is bounded in count and time, loopback only):
 *   a. 50-item batch submissions per second and their latency, embedded and on Redis, next to the same server's
 *      /healthz (rounds interleaved, medians);
 *   b. signed webhook deliveries per second through the DeliveryEngine (enqueue, sign at send time, POST) to a
 *      node:http receiver in a child process that answers 200, next to bare undici POSTs of the same body to the
 *      same receiver in the same run; signatures checked on a sample with the reference receiver's verifier.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { verifyGenwayWebhook } from '../examples/webhook-receiver';
import type * as ConfigModule from '../src/config';
import type * as ServicesModule from '../src/services';
import {
  BENCH_SECRETS_KEY,
  BUILT_SRC,
  cpuSnapshot,
  drainQueues,
  dropPrefix,
  load,
  machineNote,
  median,
  othersNote,
  redisPid,
  REDIS_URL,
  startPair,
  writeSection,
  type LoadResult,
} from './lib';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** Concurrent batch clients for the throughput row; a second row runs one client at a time (latency). */
const CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const ITEMS = 50;
/** Deliveries per round and path (bounded), and how long one round may take at most. */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5000);
const DELIVERY_TIMEOUT_MS = 60_000;
/** The receiver keeps every SAMPLE_EVERY-th request (headers and raw body) for signature checks. */
const SAMPLE_EVERY = 50;
/** undici pool size of the baseline: the same as the outbound client's (src/outbound/client.ts). */
const POOL_CONNECTIONS = 256;

type Mode = 'embedded' | 'redis';
const MODES: Mode[] = ['embedded', 'redis'];

// ---------------------------------------------------------------------------------------------------------------
// a. 50-item batch submissions

function batchBody(itemKeyPrefix: string): string {
  const items = Array.from({ length: ITEMS }, (_, n) => ({
    client_item_id: `i${n}`,
    idempotency_key: `${itemKeyPrefix}-i${n}`,
    input: { mode: 'text-to-image', prompt: '[sandbox:delay=600000] a fox' },
  }));
  return JSON.stringify({ items });
}

interface BatchRows {
  health: LoadResult[];
  batch: LoadResult[];
  serial: LoadResult[];
  /** Answers that were 200 but did not accept all 50 items (should stay 0). */
  partial: number;
  /** Redis: how long the worker still needed after a throughput row to start the accepted tasks (ms). */
  drains: number[];
}

async function batchLoad(base: string, key: string, connections: number, rows: BatchRows) {
  return load({
    url: `${base}/api/v1/generateTask/image-gen/batches`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: batchBody('template'),
    connections,
    seconds: SECONDS,
    // A fresh Idempotency-Key and fresh item keys per request: every request creates 50 new, charged tasks.
    setupRequest: (req) => {
      const id = randomUUID();
      return { ...req, headers: { ...req.headers, 'idempotency-key': id }, body: batchBody(id) };
    },
    onResponse: (status, body) => {
      if (status === 200 && !body.includes(`"newlyAcceptedCount":${ITEMS},`)) rows.partial++;
    },
  });
}

async function benchBatches(): Promise<{ rows: Record<Mode, BatchRows>; others: string }> {
  const servers = await startPair('batches');
  const { keys, prefix } = servers;
  const results: Record<Mode, BatchRows> = {
    embedded: { health: [], batch: [], serial: [], partial: 0, drains: [] },
    redis: { health: [], batch: [], serial: [], partial: 0, drains: [] },
  };
  let others = '';
  try {
    const before = cpuSnapshot(servers.pids);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of MODES) {
        const base = servers[mode].base;
        const rows = results[mode];
        rows.health.push(await load({ url: `${base}/healthz`, connections: CONNECTIONS, seconds: SECONDS }));
        rows.batch.push(await batchLoad(base, keys[mode], CONNECTIONS, rows));
        // The in-process worker may still be starting the accepted tasks: let it finish before the next row.
        if (mode === 'redis') rows.drains.push(await drainQueues(prefix));
        rows.serial.push(await batchLoad(base, keys[mode], 1, rows));
        if (mode === 'redis') await drainQueues(prefix);
        process.stderr.write(
          `round ${round} ${mode}: ${rows.batch.at(-1)!.rps.toFixed(1)} batches/s (${CONNECTIONS} clients), ` +
            `p99 ${rows.serial.at(-1)!.p99} ms (1 client)\n`,
        );
      }
    }
    others = othersNote(before, cpuSnapshot(servers.pids));
  } finally {
    await servers.stop();
  }
  return { rows: results, others };
}

// ---------------------------------------------------------------------------------------------------------------
// b. Signed deliveries

interface Captured {
  headers: http.IncomingHttpHeaders;
  body: string;
}
type ToReceiver = { cmd: 'expect'; count: number } | { cmd: 'report' };
type FromReceiver =
  | { type: 'listening'; port: number }
  | { type: 'ready' }
  | { type: 'done'; count: number }
  | { type: 'report'; count: number; uniqueEventIds: number; sample: Captured[] };

/** The receiver (child process): counts requests, answers 200, tells the parent when `expect` were counted. */
function runReceiver(): void {
  const send = (message: FromReceiver) => process.send!(message);
  let expected = Infinity;
  let count = 0;
  let eventIds = new Set<string>();
  let sample: Captured[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = count++;
      const eventId = req.headers['x-genway-event-id'];
      if (typeof eventId === 'string') eventIds.add(eventId);
      if (n % SAMPLE_EVERY === 0)
        sample.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (count === expected) send({ type: 'done', count });
    });
  });
  process.on('message', (message: ToReceiver) => {
    if (message.cmd === 'expect') {
      expected = message.count;
      count = 0;
      eventIds = new Set();
      sample = [];
      send({ type: 'ready' });
    } else {
      send({ type: 'report', count, uniqueEventIds: eventIds.size, sample });
    }
  });
  process.on('disconnect', () => process.exit(0));
  // Idle pooled connections survive the pauses between rounds (no reconnect noise in either path).
  server.keepAliveTimeout = 120_000;
  server.listen(0, '127.0.0.1', () =>
    send({ type: 'listening', port: (server.address() as { port: number }).port }),
  );
}

class Receiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const child = fork(__filename, ['receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: FromReceiver) => (m.type === 'listening' ? resolve(m.port) : reject(m)));
      child.once('exit', () => reject(new Error('receiver exited')));
    });
    return new Receiver(child, `http://127.0.0.1:${port}/hook`);
  }

  private next<T extends FromReceiver['type']>(type: T, timeoutMs: number) {
    return new Promise<Extract<FromReceiver, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`receiver: no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (m: FromReceiver) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(m as Extract<FromReceiver, { type: T }>);
      };
      this.child.on('message', onMessage);
    });
  }

  /** Resets the counters (acknowledged); `done` resolves when `count` requests have arrived, or rejects. */
  async expect(count: number): Promise<{ done: Promise<unknown> }> {
    const ready = this.next('ready', 10_000);
    this.child.send({ cmd: 'expect', count } satisfies ToReceiver);
    await ready;
    const done = this.next('done', DELIVERY_TIMEOUT_MS);
    done.catch(() => undefined); // observed by the caller; never an unhandled rejection meanwhile
    return { done };
  }

  async report() {
    const reply = this.next('report', 10_000);
    this.child.send({ cmd: 'report' } satisfies ToReceiver);
    return reply;
  }

  get pid(): number {
    return this.child.pid!;
  }

  stop(): Promise<void> {
    return new Promise((r) => {
      if (this.child.exitCode !== null) return r();
      this.child.once('exit', () => r());
      this.child.disconnect();
    });
  }
}

/** A webhook body of the real shape and size (a terminal batch item's status envelope). */
function webhookBody(): string {
  const now = Date.now();
  return JSON.stringify({
    code: 200,
    message: 'success',
    data: {
      taskId: 'task_0123456789abcdef0123456789abcdef',
      state: 'success',
      resultJson: JSON.stringify({
        resultUrls: [
          'http://127.0.0.1:8080/files/task_0123456789abcdef/0.png?expires=1&sig=0123456789abcdef',
        ],
      }),
      createTime: now - 3000,
      completeTime: now,
      costTime: 3000,
    },
    batch: { batchId: 'batch_0123456789abcdef0123456789abcdef', clientItemId: 'i0' },
  });
}

interface EngineUnderTest {
  services: ServicesModule.Services;
  accountId: string;
  secret: string;
  version: number;
  prefix?: string;
}

/** Real services as built (so Lua scripts and config/default.yaml resolve as in production), one per store. */
async function startEngine(mode: Mode): Promise<EngineUnderTest> {
  const distUrl = (file: string) => pathToFileURL(path.join(BUILT_SRC, file)).href;
  const { loadConfig } = (await import(distUrl('config/index.js'))) as typeof ConfigModule;
  const { createServices } = (await import(distUrl('services.js'))) as typeof ServicesModule;
  const prefix = mode === 'redis' ? `genway-bench-deliveries-${Date.now()}` : undefined;
  const config = loadConfig({
    env: {},
    overlay: {
      log: { level: 'warn' },
      security: { allowPrivateTargets: true, secretsKey: BENCH_SECRETS_KEY },
      store: prefix ? { redisUrl: REDIS_URL, prefix } : {},
    },
  });
  const services = createServices(config);
  services.deliveries.registerWorker();
  const { accountId } = await services.accounts.createAccount('bench-deliveries', 0);
  const { secret, version } = await services.webhookSecrets.current(accountId);
  return { services, accountId, secret, version, prefix };
}

async function stopEngine(engine: EngineUnderTest): Promise<void> {
  const distUrl = pathToFileURL(path.join(BUILT_SRC, 'services.js')).href;
  const { closeServices } = (await import(distUrl)) as typeof ServicesModule;
  await closeServices(engine.services);
  if (engine.prefix) await dropPrefix(engine.prefix);
}

async function timed(receiver: Receiver, count: number, send: (count: number) => Promise<unknown>) {
  const { done } = await receiver.expect(count);
  const start = performance.now();
  await send(count);
  await done;
  return count / ((performance.now() - start) / 1000);
}

interface DeliveryResults {
  bare: number[];
  engine: Record<Mode, number[]>;
  verified: number;
  sampled: number;
  duplicatesOrMissing: number;
  /** jobs.concurrency of the Redis engine's BullMQ worker. */
  concurrency: number;
  /** CPU use of processes outside this run while it ran. */
  others: string;
}

async function benchDeliveries(): Promise<DeliveryResults> {
  const receiver = await Receiver.start();
  const agent = new Agent({ connections: POOL_CONNECTIONS });
  const engines: Partial<Record<Mode, EngineUnderTest>> = {};
  const results: DeliveryResults = {
    bare: [],
    engine: { embedded: [], redis: [] },
    verified: 0,
    sampled: 0,
    duplicatesOrMissing: 0,
    concurrency: 0,
    others: '',
  };
  const body = webhookBody();
  const bare = (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const res = await request(receiver.url, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.body.text();
      }),
    );
  const signed = (engine: EngineUnderTest, run: string) => (count: number) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        engine.services.deliveries.enqueue({
          kind: 'webhook',
          accountId: engine.accountId,
          url: receiver.url,
          body,
          eventId: `evt_bench_${run}_${i}`,
          secretVersion: engine.version,
        }),
      ),
    );
  try {
    for (const mode of MODES) engines[mode] = await startEngine(mode);
    results.concurrency = engines.redis!.services.config.jobs.concurrency;
    const pids = [receiver.pid, (await redisPid()) ?? 0];
    const before = cpuSnapshot(pids);
    // Round 0 warms up (JIT, pooled connections, Lua script cache) and is not recorded.
    for (let round = 0; round <= ROUNDS; round++) {
      const count = round === 0 ? Math.min(DELIVERIES, 1000) : DELIVERIES;
      const bareRate = await timed(receiver, count, bare);
      const rates: Partial<Record<Mode, number>> = {};
      for (const mode of MODES) {
        const engine = engines[mode]!;
        rates[mode] = await timed(
          receiver,
          count,
          signed(engine, `${mode}-${round}-${randomUUID().slice(0, 8)}`),
        );
        const report = await receiver.report();
        if (round === 0) continue;
        results.engine[mode].push(rates[mode]);
        results.duplicatesOrMissing += count - report.uniqueEventIds;
        for (const captured of report.sample) {
          const verdict = verifyGenwayWebhook({
            rawBody: Buffer.from(captured.body, 'utf8'),
            headers: captured.headers,
            secrets: [engine.secret],
          });
          results.sampled++;
          if (verdict.ok && captured.body === body) results.verified++;
        }
      }
      if (round > 0) results.bare.push(bareRate);
      process.stderr.write(
        `${round === 0 ? 'warm-up' : `round ${round}`} deliveries/s: bare ${bareRate.toFixed(0)}, ` +
          `embedded ${rates.embedded!.toFixed(0)}, redis ${rates.redis!.toFixed(0)}\n`,
      );
    }
    results.others = othersNote(before, cpuSnapshot(pids));
  } finally {
    for (const engine of Object.values(engines)) await stopEngine(engine);
    await agent.close();
    await receiver.stop();
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const machine = machineNote();
  const { rows: batches, others: batchOthers } = await benchBatches();
  const deliveries = await benchDeliveries();

  const row = (mode: string, what: string, conns: number, rs: LoadResult[], items: number) => {
    const rps = median(rs.map((r) => r.rps));
    const itemsPerSec = items ? (rps * items).toFixed(0) : '-';
    return `| ${mode} | ${what} | ${conns} | ${rps.toFixed(items ? 1 : 0)} | ${itemsPerSec} | ${median(rs.map((r) => r.p50)).toFixed(1)} | ${median(rs.map((r) => r.p99)).toFixed(1)} | ${rs.reduce((n, r) => n + r.errors, 0)} |`;
  };
  const cost = (mode: Mode) =>
    median(batches[mode].health.map((r) => r.rps)) / median(batches[mode].batch.map((r) => r.rps));
  const bare = median(deliveries.bare);
  const drow = (what: string, rates: number[]) => {
    const rate = median(rates);
    return `| ${what} | ${rate.toFixed(0)} | ${((rate / bare) * 100).toFixed(0)}% |`;
  };
  const p99Redis = median(batches.redis.serial.map((r) => r.p99));
  const deliveryMin = Math.min(median(deliveries.engine.embedded), median(deliveries.engine.redis));
  const table = [
    `${ROUNDS} interleaved rounds, medians, loopback. Batches: ${SECONDS} s per row (autocannon), POST /generateTask/image-gen/batches with ${ITEMS} items, a fresh Idempotency-Key and fresh item idempotency keys per request (${ITEMS} new charged tasks, each written with its progress job; sandbox items stay pending), against the same server's /healthz at the same concurrency. Deliveries: ${DELIVERIES} webhooks per round enqueued through DeliveryEngine (services built in-process from dist/, signed at send time, POSTed by the outbound client) to a node:http receiver in a child process answering 200, timed from the first enqueue until the receiver counted all; baseline: ${DELIVERIES} bare undici POSTs of the same body to the same receiver through a pool of the same size (${POOL_CONNECTIONS}). ${machine}; during the batch part ${batchOthers}, during the delivery part ${deliveries.others}.`,
    '',
    '| store | load | clients | req/s | items/s | p50 ms | p99 ms | non-2xx |',
    '| - | - | - | - | - | - | - | - |',
    ...MODES.flatMap((mode) => [
      row(mode, 'GET /healthz (floor)', CONNECTIONS, batches[mode].health, 0),
      row(mode, `POST ${ITEMS}-item batch`, CONNECTIONS, batches[mode].batch, ITEMS),
      row(mode, `POST ${ITEMS}-item batch`, 1, batches[mode].serial, ITEMS),
    ]),
    '',
    `At ${CONNECTIONS} clients the server answers ${cost('embedded').toFixed(0)} /healthz requests in the time of one ${ITEMS}-item batch embedded, ${cost('redis').toFixed(0)} on Redis; after each ${SECONDS} s Redis batch row the worker needed a further ${(median(batches.redis.drains) / 1000).toFixed(1)} s (median) to start the accepted tasks (waited for before the next row). ${batches.embedded.partial + batches.redis.partial} answers accepted fewer than ${ITEMS} items.`,
    '',
    '| deliveries | per s | vs bare POSTs |',
    '| - | - | - |',
    drow('bare undici POST (baseline)', deliveries.bare),
    drow('DeliveryEngine, embedded (in-process jobs)', deliveries.engine.embedded),
    drow(
      `DeliveryEngine, Redis (BullMQ worker, concurrency ${deliveries.concurrency})`,
      deliveries.engine.redis,
    ),
    '',
    `Signatures: ${deliveries.verified} of ${deliveries.sampled} sampled deliveries verified with examples/webhook-receiver.ts (every ${SAMPLE_EVERY}th request); ${deliveries.duplicatesOrMissing} duplicate or missing event ids. Targets: p99 of a ${ITEMS}-item batch under 100 ms on Redis (one client at a time: ${p99Redis.toFixed(0)} ms, ${p99Redis < 100 ? 'met' : 'missed'}; ${CONNECTIONS} clients: ${median(batches.redis.batch.map((r) => r.p99)).toFixed(0)} ms); at least 1,000 signed deliveries/s (slowest store: ${deliveryMin.toFixed(0)}/s, ${deliveryMin >= 1000 ? 'met' : 'missed'}).`,
  ].join('\n');
  writeSection('Batches and deliveries', table);
  process.stdout.write(`${table}\n`);
}

if (process.argv[2] === 'receiver') {
  runReceiver();
} else {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
