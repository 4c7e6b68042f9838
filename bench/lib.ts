import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import type { RequestLogRow } from '../src/logs/types';

/** The repository: one level up from bench/ when run from source (a test), two from dist/bench/ when built. */
export const ROOT = fs.existsSync(path.join(__dirname, '..', 'package.json'))
  ? path.join(__dirname, '..')
  : path.join(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'dist', 'main.js');
/**
 * src/ as scripts/build-bench.js compiled it, one module per file with its Lua, SQL and media beside it, for a bench
 * that builds services in its own process (dist/ holds one bundle per entry point, not modules).
 */
export const BUILT_SRC = path.join(ROOT, 'build-bench', 'src');
export const ADMIN = 'bench-admin-token-0123456789';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface Server {
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * How the image (the Dockerfile's ENTRYPOINT) and `npm start` start node, so Genway is benched as it is deployed: a
 * young generation of 8 MB a semi-space and an old generation configured at 64 MB (docs/decisions.md).
 */
export const DEPLOYED_NODE_FLAGS = ['--max-semi-space-size=8', '--initial-old-space-size=64'];

/** Node / V8 flags named in an environment variable, space-separated; undefined when it is unset (`''`: none). */
export const flagsFromEnv = (name: string): string[] | undefined =>
  process.env[name]?.split(' ').filter(Boolean);

/**
 * Starts `node <DEPLOYED_NODE_FLAGS> dist/main.js <args>` (access logs at warn, as a busy deployment would) and waits
 * for /healthz.
 */
export async function startServer(
  args: string[],
  env: Record<string, string> = {},
  main = MAIN,
  nodeFlags: string[] = DEPLOYED_NODE_FLAGS,
): Promise<Server> {
  const port = await freePort();
  // BENCH_NODE_FLAGS: V8 / Node flags for Genway alone (an A/B of a runtime setting; the bare pipe keeps the defaults).
  const flags = [...(flagsFromEnv('BENCH_NODE_FLAGS') ?? []), ...nodeFlags];
  const child = spawn(process.execPath, [...flags, main, ...args], {
    env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'warn', GENWAY_ADMIN_TOKEN: ADMIN, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 150) throw new Error(`server ${args.join(' ')} did not start`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    base,
    child,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/** Genway embedded and Genway on Redis (its own key prefix), each with a bench key: what every bench compares. */
export interface ServerPair {
  embedded: Server;
  redis: Server;
  /** The Redis server's key prefix (queues included), dropped by stop(). */
  prefix: string;
  keys: { embedded: string; redis: string };
  /** Their process ids and the Redis server's (when found), for CPU accounting. */
  pids: number[];
  stop(): Promise<void>;
}

export const BENCH_SECRETS_KEY = 'bench-secrets-key-0123456789';

/** Starts both servers with `env` (e.g. vendor base URLs) and gives each an account and key. */
export async function startPair(name: string, env: Record<string, string> = {}): Promise<ServerPair> {
  const prefix = `genway-bench-${name}-${Date.now()}`;
  const embedded = await startServer(['serve'], env);
  const redis = await startServer(['serve'], {
    ...env,
    REDIS_URL,
    GENWAY_SECRETS_KEY: BENCH_SECRETS_KEY,
    GENWAY_STORE_PREFIX: prefix,
  }).catch(async (err: unknown) => {
    await embedded.stop();
    throw err;
  });
  const stop = async () => {
    await Promise.all([embedded.stop(), redis.stop()]);
    await dropPrefix(prefix);
  };
  try {
    const keys = { embedded: await benchKey(embedded.base), redis: await benchKey(redis.base) };
    const server = await redisPid();
    const pids = [embedded.child.pid!, redis.child.pid!, ...(server ? [server] : [])];
    return { embedded, redis, prefix, keys, pids, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * BENCH_PRICED=1: a Genway config file pricing the stand-in's models (claude-bench, gpt-bench at 3 / 15 USD per MTok),
 * so every call is metered, balance-checked and charged as in a deployment that bills its users; the env that loads
 * it, and a remover for the file. Without BENCH_PRICED, no file and no env.
 */
export function pricedConfig(name: string): { env: Record<string, string>; remove(): void } {
  if (process.env.BENCH_PRICED !== '1') return { env: {}, remove: () => undefined };
  const price = { inputPerMTokUsd: 3, outputPerMTokUsd: 15 };
  const file = path.join(os.tmpdir(), `genway-bench-${name}-${process.pid}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify({ gateway: { prices: { 'claude-bench': price, 'gpt-bench': price } } }),
  );
  return { env: { GENWAY_CONFIG: file }, remove: () => fs.rmSync(file, { force: true }) };
}

/** An account with plenty of money and a key without a practical rate limit. */
export async function benchKey(base: string): Promise<string> {
  const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const acct = (await (
    await fetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'bench', balanceUsd: 1_000_000 }),
    })
  ).json()) as { data: { accountId: string } };
  const key = (await (
    await fetch(`${base}/admin/v1/accounts/${acct.data.accountId}/keys`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ rateLimit: { ratePerSec: 1_000_000, burst: 1_000_000 } }),
    })
  ).json()) as { data: { key: string } };
  return key.data.key;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  errors: number;
}

/**
 * Closed-loop load for `seconds` (bounded) with `connections` concurrent clients. `setupRequest` rewrites every
 * request before it is sent (e.g. a fresh Idempotency-Key each time); `onResponse` sees every answer.
 */
export async function load(opts: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  setupRequest?: (request: autocannon.Request) => autocannon.Request;
  onResponse?: (status: number, body: string) => void;
}): Promise<LoadResult> {
  const hooks = opts.setupRequest || opts.onResponse;
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections,
    duration: opts.seconds,
    ...(hooks
      ? {
          requests: [
            {
              ...(opts.setupRequest ? { setupRequest: opts.setupRequest } : {}),
              ...(opts.onResponse ? { onResponse: opts.onResponse } : {}),
            },
          ],
        }
      : {}),
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** Deletes every key under `prefix` (SCAN + UNLINK): what a bench run wrote on the shared Redis. */
export async function dropPrefix(prefix: string): Promise<number> {
  if (!/^genway-bench-/.test(prefix)) throw new Error(`refusing to drop ${prefix}: not a bench prefix`);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  let dropped = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) dropped += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return dropped;
}

/**
 * The code and machine a table was measured on: the commit (and whether src/ had uncommitted changes, as in a shared
 * checkout), CPUs, Node, and how busy the (shared) machine was before the run.
 */
export function machineNote(): string {
  const git = (...args: string[]) =>
    spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).stdout?.trim() ?? '';
  const head = git('rev-parse', '--short', 'HEAD') || 'unknown commit';
  const dirty = git('status', '--porcelain', '--', 'src') !== '';
  const load = os.loadavg()[0].toFixed(1);
  return `Code at ${head}${dirty ? ' plus uncommitted changes in src/' : ''}; ${os.cpus().length} CPUs, Node ${process.versions.node}, 1-min load average ${load} before the run`;
}

/**
 * Waits (bounded) until the BullMQ queues under a store prefix have no waiting or active jobs, so work accepted in
 * one measurement (e.g. task-progress jobs of the submitted tasks) does not run during the next one. Delayed jobs
 * (a sandbox task's finish step, minutes away) are not waited for. Returns how long it took.
 */
export async function drainQueues(
  prefix: string,
  queues: string[] = ['task-progress'],
  timeoutMs = 60_000,
): Promise<number> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  const start = Date.now();
  try {
    for (;;) {
      const pipeline = redis.pipeline();
      for (const q of queues) {
        const base = `${prefix}:bull:${q}`;
        pipeline.llen(`${base}:wait`).llen(`${base}:active`).zcard(`${base}:prioritized`);
      }
      const counts = (await pipeline.exec())!.map(([err, n]) => (err ? 0 : Number(n)));
      if (counts.every((n) => n === 0)) return Date.now() - start;
      if (Date.now() - start > timeoutMs)
        throw new Error(`queues under ${prefix} did not drain in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    redis.disconnect();
  }
}

/** CPU seconds used so far by the whole machine (busy time) and by the processes of this run. Linux (/proc). */
export interface CpuSnapshot {
  at: number;
  machine: number;
  ours: number;
}

export function procCpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, USER_HZ = 100
  } catch {
    return 0;
  }
}

/** `pids`: the other processes of this run (servers, receiver, the Redis server); this process counts itself. */
export function cpuSnapshot(pids: number[]): CpuSnapshot {
  let machine = NaN;
  try {
    const [user, nice, system, , , irq, softirq] = fs
      .readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    machine = (user + nice + system + irq + softirq) / 100;
  } catch {
    // not Linux: the note then says "unknown"
  }
  const self = process.cpuUsage();
  const ours = (self.user + self.system) / 1e6 + pids.reduce((sum, pid) => sum + procCpuSeconds(pid), 0);
  return { at: performance.now(), machine, ours };
}

/** How many CPUs' worth other processes (outside this run) used between two snapshots: noise from a shared box. */
export function othersNote(from: CpuSnapshot, to: CpuSnapshot): string {
  const others = (to.machine - from.machine - (to.ours - from.ours)) / ((to.at - from.at) / 1000);
  return Number.isFinite(others)
    ? `other processes used ${Math.max(0, others).toFixed(2)} of ${os.cpus().length} CPUs`
    : 'CPU use of other processes unknown';
}

/** The Redis server's process id (to count its CPU as part of the run), or undefined. */
export async function redisPid(): Promise<number | undefined> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
  try {
    const match = /process_id:(\d+)/.exec(await redis.info('server'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

export interface PacedResult {
  p50: number;
  p99: number;
  /** p99 of Genway's own time per call (its `X-Genway-Overhead-Ms` header); NaN where no answer carried it. */
  ownP99: number;
  errors: number;
}

export interface PacedStream {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * Open loop at a fixed rate, latencies in ms with µs precision: requests leave on schedule whether or not earlier
 * ones have returned, so a slow answer cannot hold back the load (no coordinated omission). Bounded: rate x seconds.
 */
export async function paced(opts: PacedStream & { rate: number; seconds: number }): Promise<PacedResult> {
  return (await pacedTogether([opts], opts.rate, opts.seconds))[0];
}

/**
 * Several streams at `rate` each, in one schedule: their requests take turns at even offsets (with 4 streams at 500
 * req/s, one request leaves every 0.5 ms, each stream's every 2 ms). A stall of the machine then lands on every
 * stream alike, where streams measured one after another each meet the machine's noise of their own seconds.
 */
export async function pacedTogether(
  streams: PacedStream[],
  rate: number,
  seconds: number,
): Promise<PacedResult[]> {
  return pacedSamples(streams, rate, seconds).then((samples) => samples.map(summarize));
}

/**
 * The same streams, each alone in its turn: SLICES slices of `seconds / slices` per stream, A B C A B C ..., so no
 * stream's requests wait on another target's work (on one pinned CPU, a proxy woken while another runs waits for the
 * scheduler), while a stall of the machine still lands on every stream's slices alike.
 */
export async function pacedInTurns(
  streams: PacedStream[],
  rate: number,
  seconds: number,
  slices: number,
): Promise<PacedResult[]> {
  const all: PacedSamples[] = streams.map(() => ({ latencies: [], own: [], errors: 0 }));
  for (let slice = 0; slice < slices; slice++) {
    for (let s = 0; s < streams.length; s++) {
      const [got] = await pacedSamples([streams[s]], rate, seconds / slices);
      all[s].latencies.push(...got.latencies);
      all[s].own.push(...got.own);
      all[s].errors += got.errors;
    }
  }
  return all.map(summarize);
}

interface PacedSamples {
  latencies: number[];
  /** Genway's own time per call, from its `X-Genway-Overhead-Ms` header. */
  own: number[];
  errors: number;
}

async function pacedSamples(streams: PacedStream[], rate: number, seconds: number): Promise<PacedSamples[]> {
  const agents = streams.map(() => new http.Agent({ keepAlive: true, maxSockets: 512 }));
  const samples: PacedSamples[] = streams.map(() => ({ latencies: [], own: [], errors: 0 }));
  const one = (s: number) =>
    new Promise<number>((resolve, reject) => {
      const stream = streams[s];
      const t0 = performance.now();
      const req = http.request(
        stream.url,
        { method: stream.method ?? 'GET', headers: stream.headers, agent: agents[s] },
        (res) => {
          const overhead = res.headers['x-genway-overhead-ms'];
          if (typeof overhead === 'string') samples[s].own.push(Number(overhead));
          res.resume();
          res.on('end', () =>
            res.statusCode! < 300
              ? resolve(performance.now() - t0)
              : reject(new Error(String(res.statusCode))),
          );
        },
      );
      req.on('error', reject);
      req.end(stream.body);
    });
  const inflight: Promise<void>[] = [];
  const n = streams.length;
  const start = performance.now();
  for (let i = 0; i < rate * seconds * n; i++) {
    const wait = start + (i * 1000) / (rate * n) - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const s = i % n;
    inflight.push(
      one(s).then(
        (ms) => void samples[s].latencies.push(ms),
        () => void samples[s].errors++,
      ),
    );
  }
  await Promise.all(inflight);
  for (const agent of agents) agent.destroy();
  return samples;
}

function summarize({ latencies, own, errors }: PacedSamples): PacedResult {
  const percentiles = (values: number[]) => {
    values.sort((a, b) => a - b);
    return (p: number) => values[Math.min(values.length - 1, Math.floor(p * values.length))] ?? NaN;
  };
  const at = percentiles(latencies);
  return { p50: at(0.5), p99: at(0.99), ownP99: percentiles(own)(0.99), errors };
}

/**
 * The machine's own stalls on one CPU: a busy loop pinned there notes every gap over 0.2 ms between two reads of
 * the clock (the hypervisor or another process took the CPU). What a p99 can not be below, whatever runs there.
 */
export function cpuStalls(cpu: number, seconds: number): { msPerSecond: number; longestMs: number } {
  const probe = `let last=performance.now();const end=last+${seconds * 1000};let sum=0,max=0;for(;;){const now=performance.now();if(now>end)break;const gap=now-last;if(gap>0.2){sum+=gap;if(gap>max)max=gap}last=now}process.stdout.write(JSON.stringify({sum,max}))`;
  const run = spawnSync('taskset', ['-c', String(cpu), process.execPath, '-e', probe], { encoding: 'utf8' });
  if (run.status !== 0) return { msPerSecond: NaN, longestMs: NaN };
  const { sum, max } = JSON.parse(run.stdout) as { sum: number; max: number };
  return { msPerSecond: sum / seconds, longestMs: max };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Replaces (or appends) one `## <title>` section of docs/performance.md. */
export function writeSection(title: string, body: string): void {
  const file = path.join(ROOT, 'docs', 'performance.md');
  const header =
    '# Performance\n\nEvery table is measured in one run against a baseline from the same run (this machine is shared and noisy: compare rows, not absolute numbers across runs).\n';
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : header;
  const section = `## ${title}\n\n${body.trim()}\n`;
  const re = new RegExp(`## ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n[\\s\\S]*?(?=\\n## |$)`);
  text = re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}`;
  fs.writeFileSync(file, text);
  // The repository's formatter owns the layout (tables aligned), so `prettier --check` passes on what benches write.
  const prettier = path.join(ROOT, 'node_modules', 'prettier', 'bin', 'prettier.cjs');
  const formatted = spawnSync(process.execPath, [prettier, '--write', file], { cwd: ROOT, encoding: 'utf8' });
  if (formatted.status !== 0)
    process.stderr.write(`prettier could not format ${file}: ${formatted.stderr}\n`);
}

/** A logger that says nothing, for the log stores and writers the benches build. */
export const QUIET_LOGGER = { warn() {}, info() {}, error() {}, debug() {} } as never;

/**
 * A gateway call's request-log row as the log benches write it: a messages call to anthropic from the Anthropic SDK,
 * answered 200, unpriced, with no task, batch or sizes; `values` give the row's own and whatever differs.
 */
export function gatewayRow(
  values: Pick<RequestLogRow, 'time' | 'requestId' | 'accountId' | 'keyId' | 'model'> &
    Partial<RequestLogRow>,
): RequestLogRow {
  return {
    surface: 'gateway',
    method: 'POST',
    route: '/v1/messages',
    upstream: 'anthropic',
    upstreamModel: values.model,
    status: 200,
    errorType: null,
    inputTokens: 12,
    outputTokens: 34,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: null,
    costMicros: 0,
    latencyMs: 1.234,
    ttfbMs: 0.9,
    userAgent: 'Anthropic/JS 0.60.0',
    clientIp: null,
    taskId: null,
    batchId: null,
    requestBytes: null,
    responseBytes: null,
    ...values,
  };
}
