/**
 * npm run bench:gateway — the LLM gateway against the physical limit of a Node proxy, in one run.
 *
 * Targets, each in front of the same vendor stand-in (bench/upstream.ts, its own process):
 *   direct    the vendor itself (no proxy)
 *   bare      bench/bare-proxy.ts: node:http pipe that only swaps the key header
 *   embedded  Genway, memory store
 *   redis     Genway on Redis
 * Measured per target, rounds interleaved, medians reported: requests/s at 32 connections and the proxy
 * process's CPU per request; p50/p99 at fixed 100 and 500 req/s (open loop, µs resolution); the delay to the
 * first event of a stream whose vendor waits 50 ms per event; the proxy's RSS growth while a 100 MiB stream
 * passes; and whether every byte arrived unchanged. All loops are bounded in count and time; loopback only.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import {
  cpuSnapshot,
  machineNote,
  median,
  othersNote,
  paced,
  startPair,
  writeSection,
  type ServerPair,
} from './lib';
import { BIG_BYTES, bigChunk, JSON_ANSWER } from './upstream-data';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 4);
const SSE_SAMPLES = 10;
const VENDOR_KEY = 'sk-bench-vendor';
const CLK_TCK = 100; // Linux USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s

const REQUEST_BODY = JSON.stringify({
  model: 'claude-bench',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'Say something about foxes.' }],
});

/**
 * Pins a process (all its threads) to one CPU: the proxy under test gets CPU 1 to itself, while this load
 * generator and the vendor stand-in share CPU 0. Throughput then measures the proxy's own cost, not who won
 * the scheduler. No-op where taskset is missing (the table says which).
 */
let pinned = true;
function pin(pid: number, cpu: number): void {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  } catch {
    pinned = false;
  }
}

/** Starts a bench script that prints its port on its first stdout line. */
function startScript(name: string, args: string[] = []): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(__dirname, `${name}.js`), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ port: Number(d.toString().trim()), child }));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

/** user + system CPU seconds of a process so far. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

interface Target {
  name: string;
  base: string;
  /** The proxy process (none for direct). */
  pid?: number;
  headers: Record<string, string>;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

/** One request; resolves with its latency (ms) and body. */
function once(target: Target, body: string): Promise<{ ms: number; status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      `${target.base}/v1/messages`,
      { method: 'POST', headers: target.headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ ms: performance.now() - t0, status: res.statusCode!, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Open loop at a fixed rate against the target's /v1/messages. */
function fixedRate(target: Target, rate: number, seconds: number) {
  return paced({
    url: `${target.base}/v1/messages`,
    method: 'POST',
    headers: target.headers,
    body: REQUEST_BODY,
    rate,
    seconds,
  });
}

async function throughput(target: Target) {
  const cpuBefore = target.pid ? cpuSeconds(target.pid) : 0;
  const result = await autocannon({
    url: `${target.base}/v1/messages`,
    method: 'POST',
    headers: target.headers,
    body: REQUEST_BODY,
    connections: 32,
    duration: SECONDS,
  });
  const cpu = target.pid ? cpuSeconds(target.pid) - cpuBefore : NaN;
  const done = result['2xx'];
  return {
    rps: result.requests.average,
    cpuUsPerReq: (cpu * 1e6) / done,
    errors: result.non2xx + result.errors,
  };
}

/** Time to the first event of a stream whose vendor waits 50 ms before each event. */
async function firstEvent(target: Target): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < SSE_SAMPLES; i++) {
    samples.push(
      await new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const req = http.request(
          `${target.base}/v1/messages`,
          { method: 'POST', headers: target.headers, agent },
          (res) => {
            res.once('data', () => resolve(performance.now() - t0));
            res.resume();
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'claude-bench', stream: true, bench: 'sse' }));
      }),
    );
  }
  return median(samples);
}

/** Streams 100 MiB through the target; the proxy's RSS growth and whether the bytes arrived unchanged. */
async function bigStream(target: Target, expectedSha: string) {
  const rssBefore = target.pid ? rssBytes(target.pid) : 0;
  let rssMax = rssBefore;
  const sampler = setInterval(() => {
    if (target.pid) rssMax = Math.max(rssMax, rssBytes(target.pid));
  }, 20);
  const t0 = performance.now();
  const { sha, size } = await new Promise<{ sha: string; size: number }>((resolve, reject) => {
    const req = http.request(
      `${target.base}/v1/messages`,
      { method: 'POST', headers: target.headers, agent },
      (res) => {
        const hash = createHash('sha256');
        let n = 0;
        res.on('data', (c: Buffer) => {
          n += c.length;
          hash.update(c);
        });
        res.on('end', () => resolve({ sha: hash.digest('hex'), size: n }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'claude-bench', stream: true, bench: 'big' }));
  });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  return {
    rssGrowth: rssMax - rssBefore,
    identical: sha === expectedSha && size === BIG_BYTES,
    mbps: BIG_BYTES / 2 ** 20 / seconds,
  };
}

interface Round {
  rps: number;
  cpuUsPerReq: number;
  p50At100: number;
  p99At100: number;
  p50At500: number;
  p99At500: number;
  firstEventMs: number;
  rssGrowthMb: number;
  mbps: number;
  identical: boolean;
  errors: number;
}

async function main(): Promise<void> {
  const machine = machineNote();
  pin(process.pid, 0);
  const upstream = await startScript('upstream');
  pin(upstream.child.pid!, 0);
  const bare = await startScript('bare-proxy', [String(upstream.port)]);
  pin(bare.child.pid!, 1);
  const vendorEnv = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
  };
  let servers: ServerPair | undefined;
  try {
    servers = await startPair('gw', vendorEnv);
    const { embedded, redis } = servers;
    pin(embedded.child.pid!, 1);
    pin(redis.child.pid!, 1);
    const json = { 'content-type': 'application/json' };
    const { embedded: embeddedKey, redis: redisKey } = servers.keys;
    const targets: Target[] = [
      {
        name: 'direct',
        base: `http://127.0.0.1:${upstream.port}`,
        headers: { ...json, 'x-api-key': VENDOR_KEY },
      },
      {
        name: 'bare',
        base: `http://127.0.0.1:${bare.port}`,
        pid: bare.child.pid,
        headers: { ...json, 'x-api-key': embeddedKey },
      },
      {
        name: 'embedded',
        base: embedded.base,
        pid: embedded.child.pid,
        headers: { ...json, 'x-api-key': embeddedKey },
      },
      { name: 'redis', base: redis.base, pid: redis.child.pid, headers: { ...json, 'x-api-key': redisKey } },
    ];

    const bigSha = (() => {
      const hash = createHash('sha256');
      const chunk = bigChunk();
      for (let sent = 0; sent < BIG_BYTES; sent += chunk.length) hash.update(chunk);
      return hash.digest('hex');
    })();

    // The Redis server's CPU is part of this run, not noise (servers.pids includes it).
    const pids = [upstream.child.pid!, bare.child.pid!, ...servers.pids];
    const before = cpuSnapshot(pids);
    const rounds = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const target of targets) {
        const sample = await once(target, REQUEST_BODY);
        const jsonIdentical = sample.status === 200 && sample.body.equals(JSON_ANSWER);
        const t = await throughput(target);
        const at100 = await fixedRate(target, 100, RATE_SECONDS);
        const at500 = await fixedRate(target, 500, RATE_SECONDS);
        const firstEventMs = await firstEvent(target);
        const big = await bigStream(target, bigSha);
        rounds.get(target.name)!.push({
          rps: t.rps,
          cpuUsPerReq: t.cpuUsPerReq,
          p50At100: at100.p50,
          p99At100: at100.p99,
          p50At500: at500.p50,
          p99At500: at500.p99,
          firstEventMs,
          rssGrowthMb: big.rssGrowth / 2 ** 20,
          mbps: big.mbps,
          identical: jsonIdentical && big.identical,
          errors: t.errors + at100.errors + at500.errors,
        });
        process.stderr.write(
          `round ${round} ${target.name}: ${t.rps.toFixed(0)} req/s, ${t.cpuUsPerReq.toFixed(0)} µs CPU/req, p99@500 ${at500.p99.toFixed(2)} ms, first event ${firstEventMs.toFixed(2)} ms, RSS +${(big.rssGrowth / 2 ** 20).toFixed(1)} MB\n`,
        );
      }
    }

    const others = othersNote(before, cpuSnapshot(pids));
    const med = (name: string, field: keyof Round) => median(rounds.get(name)!.map((r) => Number(r[field])));
    const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
    const rows = targets.map((t) => {
      const all = rounds.get(t.name)!;
      return `| ${t.name} | ${fmt(med(t.name, 'rps'), 0)} | ${fmt(med(t.name, 'cpuUsPerReq'), 0)} | ${fmt(med(t.name, 'p50At100'))} / ${fmt(med(t.name, 'p99At100'))} | ${fmt(med(t.name, 'p50At500'))} / ${fmt(med(t.name, 'p99At500'))} | ${fmt(med(t.name, 'firstEventMs'))} | ${t.pid ? fmt(med(t.name, 'rssGrowthMb'), 1) : '–'} | ${fmt(med(t.name, 'mbps'), 0)} | ${all.every((r) => r.identical) ? 'yes' : 'NO'} | ${all.reduce((n, r) => n + r.errors, 0)} |`;
    });
    const pct = (name: string) => (med(name, 'rps') / med('bare', 'rps')) * 100;
    const delta = (name: string, field: keyof Round) => med(name, field) - med('bare', field);
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const summary = ['embedded', 'redis'].map((name) => {
      const target = name === 'embedded' ? 70 : 50;
      return `- ${name}: throughput ${pct(name).toFixed(0)}% of the bare proxy (target ≥ ${target}%: ${verdict(pct(name) >= target)}); p99 at 500 req/s ${fmt(delta(name, 'p99At500'))} ms above it (target ≤ 1 ms: ${verdict(delta(name, 'p99At500') <= 1)}); first SSE event ${fmt(delta(name, 'firstEventMs'))} ms after it (target ≤ 2 ms: ${verdict(delta(name, 'firstEventMs') <= 2)}); RSS growth ${fmt(med(name, 'rssGrowthMb'), 1)} MB over the 100 MiB stream (target < 50 MB: ${verdict(med(name, 'rssGrowthMb') < 50)}).`;
    });
    const spread = targets
      .filter((t) => t.pid)
      .map(
        (t) =>
          `${t.name} ${rounds
            .get(t.name)!
            .map((r) => r.cpuUsPerReq.toFixed(0))
            .join(' / ')}`,
      )
      .join('; ');
    const table = [
      `${ROUNDS} interleaved rounds; per round and target: ${SECONDS} s closed loop at 32 connections (autocannon), ${RATE_SECONDS} s open loop at 100 and at 500 req/s, ${SSE_SAMPLES} streams whose vendor waits ${50} ms per event, one 100 MiB stream. Medians of the rounds. The vendor stand-in (bench/upstream.ts) and the bare pipe proxy (bench/bare-proxy.ts) run as their own processes; Genway runs as \`node dist/main.js serve\` with LOG_LEVEL=warn. CPU is the proxy process's user+system time from /proc over the closed-loop phase divided by the requests it answered. ${pinned ? 'Each proxy runs pinned to CPU 1; the load generator and the vendor share CPU 0 (taskset).' : 'Not pinned (no taskset): all processes share both CPUs.'} ${machine}; while it ran ${others}. CPU µs/req per round, to show this machine's spread: ${spread}.`,
      '',
      '| target | req/s @32 conns | CPU µs/req | p50 / p99 ms @100/s | p50 / p99 ms @500/s | first SSE event ms | RSS growth MB (100 MiB stream) | stream MiB/s | bytes unchanged | errors |',
      '| - | - | - | - | - | - | - | - | - | - |',
      ...rows,
      '',
      ...summary,
    ].join('\n');
    writeSection('LLM gateway', table);
    process.stdout.write(`${table}\n`);
  } finally {
    agent.destroy();
    await servers?.stop();
    upstream.child.kill();
    bare.child.kill();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
