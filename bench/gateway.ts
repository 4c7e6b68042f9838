/**
 * npm run bench:gateway — the LLM gateway against the physical limit of a Node proxy, in one run.
 *
 * Targets, each in front of the same vendor stand-in (bench/upstream.ts, its own process):
 *   direct    the vendor itself (no proxy)
 *   bare      bench/bare-proxy.ts: node:http pipe that only swaps the key header
 *   embedded  Genway, memory store
 *   redis     Genway on Redis
 * With BENCH_TARGETS naming it, also `undici`: bench/bare-undici.ts, the bare pipe with undici out as Genway forwards.
 * With BENCH_OTHER=<checkout, built>, also `other`: that build's Genway embedded, an A/B of a change in the same run.
 * Every round starts the proxies as fresh processes. Measured per target and per hot route (`POST /v1/messages`,
 * `POST /v1/chat/completions`), rounds interleaved, medians reported: requests/s at 32 connections and the proxy
 * process's CPU per request; p50/p99 at fixed 100 and 500 req/s (open loop, µs resolution), and Genway's own time per
 * call (its X-Genway-Overhead-Ms header) at 500 req/s. Per target: the delay to the first event of a stream whose vendor
 * waits 50 ms per event; the proxy's RSS growth while a 100 MiB stream passes down and while a 100 MiB multipart
 * upload passes up; and whether every byte arrived unchanged. All loops are bounded in count and time; loopback.
 *
 * Then translated calls (issue 34; `translatedCalls` below): one Genway with two routes, to the stand-in's messages
 * API and to its chat completions API, each called in its own format (passed through) and in the other (translated):
 * CPU per JSON call, CPU per streamed event, and the delay to a stream's first token, translated against passed
 * through on the same route, measured in turns in the same run. BENCH_PARTS=translation runs this part alone.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import {
  benchKey,
  cpuSnapshot,
  DEPLOYED_NODE_FLAGS,
  flagsFromEnv,
  machineNote,
  median,
  cpuStalls,
  othersNote,
  pacedInTurns,
  pacedTogether,
  procCpuSeconds,
  startPair,
  startServer,
  writeSection,
  type CpuSnapshot,
  type Server,
  type ServerPair,
} from './lib';
import { closedLoop, pin, pinned, routeHeaders, startScript, throughputs, type Target } from './proxies';
import { responseTranslator } from '../src/gateway/translate';
import { BIG_BYTES, bigChunk, formatStream, HOT_ROUTES, SSE_EVENT_GAP_MS } from './upstream-data';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
/** The closed loop of each target and route is taken in this many slices, in turns with the other targets. */
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const RATE_SECONDS = Number(process.env.BENCH_RATE_SECONDS ?? 8);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/**
 * Warm 100 MiB streams per target and round, taken in turns (A B C A B C ...): the round's MiB/s is their median, and
 * the proxy's CPU per MiB is read over them. One stream takes a few tenths of a second, so one sample was whatever
 * the machine did in them.
 */
const STREAM_SAMPLES = Number(process.env.BENCH_STREAM_SAMPLES ?? 5);
const STALL_SECONDS = 2;
/**
 * BENCH_PACED=together (the default so far) paces every target in one schedule; `turns` gives each target the CPU
 * alone, in SLICES turns (bench/lib.ts pacedInTurns).
 */
const PACED = process.env.BENCH_PACED === 'turns' ? 'turns' : 'together';
/**
 * Optional comma-separated subsets, for quick comparisons: BENCH_TARGETS=bare,embedded BENCH_ROUTES=chat. Naming
 * `undici` adds the bare pipe with undici out (bench/bare-undici.ts), which runs only when named.
 */
const ONLY_TARGETS = process.env.BENCH_TARGETS?.split(',');
const ONLY_ROUTES = process.env.BENCH_ROUTES?.split(',');
/**
 * BENCH_OTHER: another checkout (a worktree of the commit before a change, built): its Genway embedded, as `other`,
 * started with BENCH_OTHER_NODE_FLAGS if set (`''`: none), else as this one is.
 */
const OTHER = process.env.BENCH_OTHER;
const OTHER_FLAGS = flagsFromEnv('BENCH_OTHER_NODE_FLAGS');
const SSE_SAMPLES = 10;
const VENDOR_KEY = 'sk-bench-vendor';
/** BENCH_PARTS=translation: only the translated calls' part; unset: every part. */
const PARTS = process.env.BENCH_PARTS?.split(',');
const TRANSLATION_ROUNDS = Number(process.env.BENCH_TRANSLATION_ROUNDS ?? 3);
const FIRST_TOKEN_SAMPLES = Number(process.env.BENCH_FIRST_TOKEN_SAMPLES ?? 40);

type RouteName = (typeof HOT_ROUTES)[number]['name'];
const ROUTES = HOT_ROUTES.filter((r) => !ONLY_ROUTES || ONLY_ROUTES.includes(r.name));

function rssBytes(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

/** One request; resolves with its latency (ms) and body. */
function once(
  target: Target,
  path: string,
  body: string,
  headers = target.headers,
): Promise<{ ms: number; status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(`${target.base}${path}`, { method: 'POST', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ ms: performance.now() - t0, status: res.statusCode!, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Every target at once at a fixed rate on one route, their requests taking turns in one schedule (open loop), with
 * every proxy on CPU 1: the machine's stalls of those seconds land on all targets alike, so the latencies compare.
 */
function fixedRate(targets: Target[], route: (typeof ROUTES)[number], rate: number, seconds: number) {
  const streams = targets.map((target) => ({
    url: `${target.base}${route.path}`,
    method: 'POST',
    headers: routeHeaders(target, route),
    body: route.body,
  }));
  return PACED === 'turns'
    ? pacedInTurns(streams, rate, seconds, SLICES)
    : pacedTogether(streams, rate, seconds);
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

/** Uploads 100 MiB of multipart through the target to POST /v1/files; the proxy's RSS growth and whether it all arrived. */
async function bigUpload(target: Target) {
  const rssBefore = target.pid ? rssBytes(target.pid) : 0;
  let rssMax = rssBefore;
  const sampler = setInterval(() => {
    if (target.pid) rssMax = Math.max(rssMax, rssBytes(target.pid));
  }, 20);
  const boundary = 'bench-upload-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = bigChunk();
  const chunks = BIG_BYTES / chunk.length;
  const hash = createHash('sha256');
  const t0 = performance.now();
  const answer = await new Promise<{ bytes: number; sha256: string }>((resolve, reject) => {
    const req = http.request(`${target.base}/v1/files`, {
      method: 'POST',
      agent,
      headers: {
        ...target.headers,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + BIG_BYTES + tail.length),
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve(JSON.parse(Buffer.concat(parts).toString()) as { bytes: number; sha256: string }),
      );
    });
    req.on('error', reject);
    void (async () => {
      for (const part of [head, ...Array.from({ length: chunks }, () => chunk), tail]) {
        hash.update(part);
        if (!req.write(part)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  return {
    rssGrowth: rssMax - rssBefore,
    identical: answer.bytes === head.length + BIG_BYTES + tail.length && answer.sha256 === hash.digest('hex'),
    mbps: BIG_BYTES / 2 ** 20 / seconds,
  };
}

interface RouteRound {
  rps: number;
  cpuUsPerReq: number;
  p50At100: number;
  p99At100: number;
  p50At500: number;
  p99At500: number;
  /** p99 of Genway's own time per call at 500 req/s, from its X-Genway-Overhead-Ms header (NaN for the others). */
  ownP99At500: number;
  identical: boolean;
  errors: number;
}

interface Round {
  routes: Record<RouteName, RouteRound>;
  firstEventMs: number;
  rssGrowthMb: number;
  mbps: number;
  /** The proxy's CPU per MiB over the round's warm streams. */
  streamCpuMsPerMib: number;
  uploadRssGrowthMb: number;
  uploadMbps: number;
  identical: boolean;
}

interface Proxies {
  /** direct, bare, embedded, redis (or the BENCH_TARGETS subset, undici included if named), each with its key. */
  targets: Target[];
  /** The processes of this round, the vendor's and the Redis server's included, for CPU accounting. */
  pids: number[];
  stop(): Promise<void>;
}

/**
 * The proxies of one round, as fresh processes: the bare pipe, Genway embedded, Genway on Redis (its own key prefix).
 * One process can run a few per cent faster or slower than another of the same code for its whole life (where its
 * JIT's choices and its memory landed: one run's bare pipe took 41-43 µs per call in every round, the next run's
 * 46-55 µs, and three fresh ones side by side 46.5-47.6 µs), so a process's luck lands on one round of the median.
 */
async function startProxies(upstream: { port: number; child: ChildProcess }): Promise<Proxies> {
  const bare = await startScript('bare-proxy', [String(upstream.port)]);
  const undici = ONLY_TARGETS?.includes('undici')
    ? await startScript('bare-undici', [String(upstream.port)])
    : undefined;
  const vendorEnv = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
    GENWAY_OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    OPENAI_API_KEY: VENDOR_KEY,
  };
  let servers: ServerPair;
  let other: { server: Server; key: string } | undefined;
  try {
    if (OTHER) {
      const server = await startServer(['serve'], vendorEnv, path.join(OTHER, 'dist/main.js'), OTHER_FLAGS);
      other = {
        server,
        key: await benchKey(server.base).catch(async (err: unknown) => {
          await server.stop();
          throw err;
        }),
      };
    }
    servers = await startPair('gw', vendorEnv);
  } catch (err) {
    bare.child.kill();
    undici?.child.kill();
    await other?.server.stop();
    throw err;
  }
  const { embedded, redis } = servers;
  const json = { 'content-type': 'application/json' };
  const { embedded: embeddedKey, redis: redisKey } = servers.keys;
  const allTargets: Target[] = [
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
    ...(undici
      ? [
          {
            name: 'undici',
            base: `http://127.0.0.1:${undici.port}`,
            pid: undici.child.pid,
            headers: { ...json, 'x-api-key': embeddedKey },
          },
        ]
      : []),
    {
      name: 'embedded',
      base: embedded.base,
      pid: embedded.child.pid,
      headers: { ...json, 'x-api-key': embeddedKey },
    },
    ...(other
      ? [
          {
            name: 'other',
            base: other.server.base,
            pid: other.server.child.pid,
            headers: { ...json, 'x-api-key': other.key },
          },
        ]
      : []),
    { name: 'redis', base: redis.base, pid: redis.child.pid, headers: { ...json, 'x-api-key': redisKey } },
  ];
  return {
    targets: allTargets.filter((t) => !ONLY_TARGETS || ONLY_TARGETS.includes(t.name) || t.name === 'other'),
    // The Redis server's CPU is part of this run, not noise (servers.pids includes it).
    pids: [
      upstream.child.pid!,
      bare.child.pid!,
      ...(undici ? [undici.child.pid!] : []),
      ...(other ? [other.server.child.pid!] : []),
      ...servers.pids,
    ],
    stop: async () => {
      bare.child.kill();
      undici?.child.kill();
      await other?.server.stop();
      await servers.stop();
    },
  };
}

async function main(): Promise<void> {
  const machine = machineNote();
  pin(process.pid, 0);
  const upstream = await startScript('upstream');
  pin(upstream.child.pid!, 0);
  let proxies: Proxies | undefined;
  try {
    const bigSha = (() => {
      const hash = createHash('sha256');
      const chunk = bigChunk();
      for (let sent = 0; sent < BIG_BYTES; sent += chunk.length) hash.update(chunk);
      return hash.digest('hex');
    })();

    if (PARTS && !PARTS.includes('proxies')) {
      const text = await translatedCalls(upstream.port, machine);
      process.stdout.write(`${text}\n`);
      return;
    }
    let targets: Target[] = [];
    /** CPU seconds of the machine and of this run's processes, and milliseconds, summed over the rounds. */
    const spent: CpuSnapshot = { at: 0, machine: 0, ours: 0 };
    /**
     * Only the proxy being measured runs on CPU 1; the others wait on CPU 0 (an idle Genway still has timers and,
     * on Redis, its workers' blocking reads), so no proxy's background work lands on another's measurement.
     */
    const onStage = (target: Target) => {
      for (const t of targets) if (t.pid) pin(t.pid, t === target ? 1 : 0);
    };
    // Every target runs each route for a while first, unmeasured: the rounds compare JIT-warm processes, not how
    // quickly each one's code gets optimised.
    const warm = async (target: Target, seconds: number) => {
      for (const route of ROUTES) await closedLoop(target, route, seconds);
    };
    const rounds = new Map<string, Round[]>();
    const stalls: { cpu0: number; cpu1: number; longest: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      proxies = await startProxies(upstream);
      ({ targets } = proxies);
      const before = cpuSnapshot(proxies.pids);
      for (const target of targets) {
        onStage(target);
        await warm(target, WARMUP_SECONDS);
      }
      const perTarget = new Map<string, Record<RouteName, RouteRound>>();
      for (const target of targets) {
        onStage(target);
        const perRoute = {} as Record<RouteName, RouteRound>;
        for (const route of ROUTES) {
          const sample = await once(target, route.path, route.body, routeHeaders(target, route));
          perRoute[route.name] = {
            rps: NaN,
            cpuUsPerReq: NaN,
            p50At100: NaN,
            p99At100: NaN,
            p50At500: NaN,
            p99At500: NaN,
            ownP99At500: NaN,
            identical: sample.status === 200 && sample.body.equals(route.answer),
            errors: 0,
          };
        }
        perTarget.set(target.name, perRoute);
        const firstEventMs = await firstEvent(target);
        // RSS growth over a first stream and upload (the process's first 100 MiB), MiB/s over a second upload and over
        // the warm streams below, once the stream path is compiled: a cold sample measures the JIT's warm-up as much
        // as the proxy.
        const big = await bigStream(target, bigSha);
        const up = await bigUpload(target);
        const bigWarm = await bigStream(target, bigSha);
        const upWarm = await bigUpload(target);
        if (!rounds.has(target.name)) rounds.set(target.name, []);
        rounds.get(target.name)!.push({
          routes: perRoute,
          firstEventMs,
          rssGrowthMb: big.rssGrowth / 2 ** 20,
          mbps: NaN,
          streamCpuMsPerMib: NaN,
          uploadRssGrowthMb: up.rssGrowth / 2 ** 20,
          uploadMbps: upWarm.mbps,
          identical: big.identical && up.identical && bigWarm.identical && upWarm.identical,
        });
        process.stderr.write(
          `round ${round} ${target.name}: first event ${firstEventMs.toFixed(2)} ms, stream RSS +${(big.rssGrowth / 2 ** 20).toFixed(1)} MB, upload RSS +${(up.rssGrowth / 2 ** 20).toFixed(1)} MB\n`,
        );
      }
      // The warm streams, in turns, each proxy on CPU 1 for its own.
      const streamed = new Map(targets.map((t) => [t.name, { mbps: [] as number[], cpuSeconds: 0 }]));
      for (let i = 0; i < STREAM_SAMPLES; i++) {
        for (const target of targets) {
          onStage(target);
          const cpuBefore = target.pid ? procCpuSeconds(target.pid) : 0;
          const sample = await bigStream(target, bigSha);
          const own = streamed.get(target.name)!;
          own.mbps.push(sample.mbps);
          if (target.pid) own.cpuSeconds += procCpuSeconds(target.pid) - cpuBefore;
          if (!sample.identical) rounds.get(target.name)!.at(-1)!.identical = false;
        }
      }
      for (const target of targets) {
        const own = streamed.get(target.name)!;
        const r = rounds.get(target.name)!.at(-1)!;
        r.mbps = median(own.mbps);
        r.streamCpuMsPerMib = target.pid
          ? (own.cpuSeconds * 1000) / (STREAM_SAMPLES * (BIG_BYTES / 2 ** 20))
          : NaN;
        process.stderr.write(
          `round ${round} ${target.name}: stream ${own.mbps.map((v) => v.toFixed(0)).join(' / ')} MiB/s, ${r.streamCpuMsPerMib.toFixed(2)} ms CPU per MiB\n`,
        );
        // A second of each route, unmeasured, after the streams and before the throughput slices: a process whose
        // JIT just served its streams and uploads re-optimises its request path on the first route measured otherwise
        // (callgrind: the first route measured after the other's warm-up ran 250-290k instructions per call in its
        // windows, 245k once settled, whichever route it was).
        onStage(target);
        await warm(target, 1);
      }
      // Throughput in turns, then latency at fixed rates in one schedule: every proxy on CPU 1.
      for (const t of targets) if (t.pid) pin(t.pid, 1);
      for (const route of ROUTES) {
        const measured = await throughputs(targets, route, SECONDS, SLICES);
        targets.forEach((target, i) => {
          const r = perTarget.get(target.name)![route.name];
          r.rps = measured[i].rps;
          r.cpuUsPerReq = measured[i].cpuUsPerReq;
          r.errors += measured[i].errors;
        });
        process.stderr.write(
          `round ${round} ${route.name}: ${targets.map((t, i) => `${t.name} ${measured[i].rps.toFixed(0)} req/s ${measured[i].cpuUsPerReq.toFixed(0)} µs`).join(', ')}\n`,
        );
        for (const [rate, p50, p99] of [
          [100, 'p50At100', 'p99At100'],
          [500, 'p50At500', 'p99At500'],
        ] as const) {
          const results = await fixedRate(targets, route, rate, RATE_SECONDS);
          targets.forEach((target, i) => {
            const r = perTarget.get(target.name)![route.name];
            r[p50] = results[i].p50;
            r[p99] = results[i].p99;
            if (rate === 500) r.ownP99At500 = results[i].ownP99;
            r.errors += results[i].errors;
          });
        }
        process.stderr.write(
          `round ${round} ${route.name} p99@500: ${targets.map((t) => `${t.name} ${perTarget.get(t.name)![route.name].p99At500.toFixed(2)}`).join(', ')} ms\n`,
        );
      }
      // The machine's own stalls this round, on each CPU, with nothing of the run busy.
      const cpu0 = cpuStalls(0, STALL_SECONDS);
      const cpu1 = cpuStalls(1, STALL_SECONDS);
      stalls.push({
        cpu0: cpu0.msPerSecond,
        cpu1: cpu1.msPerSecond,
        longest: Math.max(cpu0.longestMs, cpu1.longestMs),
      });
      const after = cpuSnapshot(proxies.pids);
      spent.at += after.at - before.at;
      spent.machine += after.machine - before.machine;
      spent.ours += after.ours - before.ours;
      await proxies.stop();
      proxies = undefined;
    }

    const others = othersNote({ at: 0, machine: 0, ours: 0 }, spent);
    type RouteField = Exclude<keyof RouteRound, 'identical'>;
    type TargetField =
      | 'firstEventMs'
      | 'rssGrowthMb'
      | 'mbps'
      | 'streamCpuMsPerMib'
      | 'uploadRssGrowthMb'
      | 'uploadMbps';
    const medRoute = (name: string, route: RouteName, field: RouteField) =>
      median((rounds.get(name) ?? []).map((r) => r.routes[route][field]));
    const med = (name: string, field: TargetField) => median((rounds.get(name) ?? []).map((r) => r[field]));
    const fmt = (v: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
    const routeRows = ROUTES.flatMap((route) =>
      targets.map((t) => {
        const all = rounds.get(t.name)!.map((r) => r.routes[route.name]);
        const m = (f: RouteField, d = 2) => fmt(medRoute(t.name, route.name, f), d);
        return `| ${route.path} | ${t.name} | ${m('rps', 0)} | ${m('cpuUsPerReq', 0)} | ${m('p50At100')} / ${m('p99At100')} | ${m('p50At500')} / ${m('p99At500')} | ${all.every((r) => r.identical) ? 'yes' : 'NO'} | ${all.reduce((n, r) => n + r.errors, 0)} |`;
      }),
    );
    const targetRows = targets.map((t) => {
      const all = rounds.get(t.name)!;
      const rss = (f: TargetField) => (t.pid ? fmt(med(t.name, f), 1) : '–');
      return `| ${t.name} | ${fmt(med(t.name, 'firstEventMs'))} | ${rss('rssGrowthMb')} | ${fmt(med(t.name, 'mbps'), 0)} (${all.map((r) => fmt(r.mbps, 0)).join(' / ')}) | ${t.pid ? fmt(med(t.name, 'streamCpuMsPerMib')) : '–'} | ${rss('uploadRssGrowthMb')} | ${fmt(med(t.name, 'uploadMbps'), 0)} | ${all.every((r) => r.identical) ? 'yes' : 'NO'} |`;
    });
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const compared = ['embedded', 'other', 'redis'].filter((name) => rounds.has(name));
    const summary = compared.flatMap((name) => {
      const goal = name === 'redis' ? 0.85 : 1.0;
      return ROUTES.map((route) => {
        const ratio = medRoute(name, route.name, 'rps') / medRoute('bare', route.name, 'rps');
        const added = medRoute(name, route.name, 'p99At500') - medRoute('direct', route.name, 'p99At500');
        const bareAdded =
          medRoute('bare', route.name, 'p99At500') - medRoute('direct', route.name, 'p99At500');
        return `- ${name} ${route.path}: throughput ${ratio.toFixed(2)}x the bare proxy (target ≥ ${goal.toFixed(2)}x: ${verdict(ratio >= goal)}); p99 at 500 req/s ${fmt(added)} ms above direct (target ≤ 0.5 ms: ${verdict(added <= 0.5)}; the bare proxy adds ${fmt(bareAdded)} ms, so ${fmt(added - bareAdded)} ms is ${name}'s over the bare proxy; its own time per call, X-Genway-Overhead-Ms, has a p99 of ${fmt(medRoute(name, route.name, 'ownP99At500'), 3)} ms).`;
      });
    });
    if (rounds.has('undici'))
      summary.push(
        ...ROUTES.map((route) => {
          const rps = (name: string) => medRoute(name, route.name, 'rps');
          const cpu = (name: string) => fmt(medRoute(name, route.name, 'cpuUsPerReq'), 0);
          const genway = compared
            .map((name) => `${name} ${(rps(name) / rps('undici')).toFixed(2)}x`)
            .join(', ');
          return `- the undici pipe ${route.path}: ${(rps('undici') / rps('bare')).toFixed(2)}x the bare proxy (CPU ${cpu('undici')} against ${cpu('bare')} µs per call); Genway against it: ${genway}.`;
        }),
      );
    summary.push(
      ...compared.map(
        (name) =>
          `- ${name}: first SSE event ${fmt(med(name, 'firstEventMs') - med('bare', 'firstEventMs'))} ms after the bare proxy's; RSS growth ${fmt(med(name, 'rssGrowthMb'), 1)} MB over the 100 MiB stream and ${fmt(med(name, 'uploadRssGrowthMb'), 1)} MB over the 100 MiB upload (target < 50 MB: ${verdict(med(name, 'rssGrowthMb') < 50 && med(name, 'uploadRssGrowthMb') < 50)}); a 100 MiB stream at ${(med(name, 'mbps') / med('bare', 'mbps')).toFixed(2)}x the bare proxy's MiB/s (target ≥ 0.95x: ${verdict(med(name, 'mbps') / med('bare', 'mbps') >= 0.95)}), ${fmt(med(name, 'streamCpuMsPerMib'))} ms of CPU per MiB against its ${fmt(med('bare', 'streamCpuMsPerMib'))}.`,
      ),
    );
    const spread = ROUTES.map(
      (route) =>
        `${route.name}: ${targets
          .filter((t) => t.pid)
          .map(
            (t) =>
              `${t.name} ${rounds
                .get(t.name)!
                .map((r) => r.routes[route.name].cpuUsPerReq.toFixed(0))
                .join(' / ')}`,
          )
          .join(', ')}`,
    ).join('; ');
    const stallNote = `${stalls.map((st) => `${fmt(st.cpu0, 1)} / ${fmt(st.cpu1, 1)}`).join(', ')} ms per second on CPU 0 / CPU 1 by round, the longest ${fmt(Math.max(...stalls.map((st) => st.longest)), 1)} ms`;
    const table = [
      `${ROUNDS} interleaved rounds; per round and route: ${SECONDS} s closed loop at 32 connections (autocannon) for each target, in ${SLICES} slices taken in turns with the other targets (A B C D A B C D ...), then ${RATE_SECONDS} s open loop at 100 and at 500 req/s to every target at once (each target at that rate, their requests taking turns in one schedule, every proxy on CPU 1), so a stall of the machine lands on all of them alike; per round and target: ${SSE_SAMPLES} streams whose vendor waits ${50} ms per event, two 100 MiB streams down and two 100 MiB multipart uploads up (RSS growth over the first of each; upload MiB/s over the second, once its path is compiled), then ${STREAM_SAMPLES} more 100 MiB streams per target taken in turns with the other targets, each proxy alone on CPU 1 for its own (stream MiB/s: their median; the proxy's CPU per MiB over them, from /proc). Every round starts its proxies as fresh processes (a process's own luck, a few per cent for its whole life, then lands on one round of the median), and every target runs each route for ${WARMUP_SECONDS} s unmeasured (JIT warm-up) before the round, and for 1 s again on CPU 1 after its streams, before the throughput slices. Medians of the rounds. The vendor stand-in (bench/upstream.ts) and the bare pipe proxy (bench/bare-proxy.ts) run as their own processes; Genway runs as \`node ${DEPLOYED_NODE_FLAGS.join(' ')} dist/main.js serve\` (as the image runs it) with LOG_LEVEL=warn. Genway's own time per call is its X-Genway-Overhead-Ms header: from the request reaching its handler to the forward leaving, plus from the vendor's head arriving to Genway's own head leaving (the kernel's and the hops' share, which the bare pipe pays too, is not in it). CPU is the proxy process's user+system time from /proc over its closed-loop slices divided by the requests it answered. ${pinned() ? 'The proxies run pinned to CPU 1 while throughput and latency are measured (only the one in its slice is busy), and one at a time on it for the streams; the load generator and the vendor share CPU 0 (taskset).' : 'Not pinned (no taskset): all processes share both CPUs.'} ${machine}; while it ran ${others}. CPU µs/req per round, to show this machine's spread: ${spread}. The machine's own stalls (a busy loop pinned to each CPU, gaps over 0.2 ms, ${STALL_SECONDS} s per CPU and round): ${stallNote}.`,
      '',
      '| route | target | req/s @32 conns | CPU µs/req | p50 / p99 ms @100/s | p50 / p99 ms @500/s | bytes unchanged | errors |',
      '| - | - | - | - | - | - | - | - |',
      ...routeRows,
      '',
      '| target | first SSE event ms | RSS growth MB (100 MiB stream) | stream MiB/s (per round) | stream CPU ms per MiB | RSS growth MB (100 MiB upload) | upload MiB/s | bytes unchanged |',
      '| - | - | - | - | - | - | - | - |',
      ...targetRows,
      '',
      ...summary,
    ].join('\n');
    // A subset run is a quick comparison, not the record.
    if (!ONLY_TARGETS && !ONLY_ROUTES) writeSection('LLM gateway', table);
    process.stdout.write(`${table}\n`);
    if (!PARTS || PARTS.includes('translation'))
      process.stdout.write(`${await translatedCalls(upstream.port, machine)}\n`);
  } finally {
    agent.destroy();
    await proxies?.stop();
    upstream.child.kill();
  }
}

/** One way of calling a route: a format's path, key header and body. */
interface Way {
  name: string;
  path: string;
  headers: Record<string, string>;
  body: (text: string, stream: boolean) => string;
}

/** The messages format's call and the chat completions format's, to `route`. */
function ways(route: string, key: string): { messages: Way; chat: Way } {
  const json = { 'content-type': 'application/json' };
  return {
    messages: {
      name: 'messages',
      path: '/v1/messages',
      headers: { ...json, 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: (text, stream) =>
        JSON.stringify({ model: route, max_tokens: 64, messages: [{ role: 'user', content: text }], stream }),
    },
    chat: {
      name: 'chat',
      path: '/v1/chat/completions',
      headers: { ...json, authorization: `Bearer ${key}` },
      body: (text, stream) =>
        JSON.stringify({ model: route, max_tokens: 64, messages: [{ role: 'user', content: text }], stream }),
    },
  };
}

/** Genway's CPU per call of one way at 32 connections for `seconds` (closed loop), and the calls answered. */
async function cpuOfWay(base: string, pid: number, way: Way, body: string, seconds: number) {
  const before = procCpuSeconds(pid);
  const result = await closedLoop(
    { name: way.name, base, pid, headers: way.headers },
    // Not named `chat`: routeHeaders would make a Bearer header of an x-api-key; each way has its own headers.
    {
      name: 'translation',
      path: way.path,
      body,
      answer: Buffer.alloc(0),
    } as unknown as (typeof HOT_ROUTES)[number],
    seconds,
  );
  return { cpu: procCpuSeconds(pid) - before, done: result['2xx'], errors: result.non2xx + result.errors };
}

/** Time to the first byte holding `tok0` (the first text delta) of a paced stream. */
function firstToken(base: string, way: Way, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(`${base}${way.path}`, { method: 'POST', headers: way.headers, agent }, (res) => {
      let seen = '';
      let done = false;
      res.on('data', (c: Buffer) => {
        seen += c.toString('latin1');
        if (!done && seen.includes('tok0')) {
          done = true;
          resolve(performance.now() - t0);
        }
      });
      res.on('end', () => (done ? undefined : reject(new Error(`no first token from ${way.path}: ${seen}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * What translation adds before a stream's first token, in process: CPU µs per stream of making the answer's translator
 * and translating the target's head and first text delta (what passes before the caller has its first token; the
 * usage tap reads the same bytes either way). The wall-clock delay through Genway is measured too, but on a shared
 * machine its noise is milliseconds; this is the work that delay can hold.
 */
function firstTokenWork(rounds: number): { name: string; us: number[] }[] {
  const cases = [
    { name: 'messages target, chat completions caller', from: 'messages' as const, to: 'chat' as const },
    { name: 'chat completions target, messages caller', from: 'chat' as const, to: 'messages' as const },
  ];
  const N = 20_000;
  return cases.map(({ name, from, to }) => {
    const stream = formatStream(from, 1, from === 'chat');
    const head = Buffer.from(stream.head.join(''));
    const first = Buffer.from(stream.deltas[0]);
    const us: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const before = process.cpuUsage();
      for (let i = 0; i < N; i++) {
        const t = responseTranslator(from, to, 'create', { model: 'route', stream: true, memo: {} }).stream();
        t.write(head);
        if (!t.write(first).includes('tok0')) throw new Error(`${name}: the first token was held back`);
      }
      const used = process.cpuUsage(before);
      us.push((used.user + used.system) / N);
    }
    return { name, us };
  });
}

/**
 * Issue 34's targets: a translated JSON call costs at most 2x a passed-through call's CPU, and a translated stream adds
 * under 0.2 ms to its first token. One Genway (embedded, pinned to CPU 1, fresh each round) routes `to-messages` to the
 * stand-in's messages API and `to-chat` to its chat completions API; each route is called in its own format (passed
 * through) and in the other (translated), every variant in slices taken in turns.
 */
async function translatedCalls(port: number, machine: string): Promise<string> {
  const file = path.join(os.tmpdir(), `genway-bench-translation-${process.pid}.json`);
  const stand = `http://127.0.0.1:${port}`;
  fs.writeFileSync(
    file,
    JSON.stringify({
      gateway: {
        upstreams: [
          { id: 'stand-messages', type: 'anthropic', baseUrl: stand, apiKeys: [VENDOR_KEY] },
          { id: 'stand-chat', type: 'openai', baseUrl: stand, apiKeys: [VENDOR_KEY], speaks: ['chat'] },
        ],
        routes: [
          { model: 'to-messages', targets: [{ upstream: 'stand-messages', model: 'claude-bench' }] },
          { model: 'to-chat', targets: [{ upstream: 'stand-chat', model: 'gpt-bench' }] },
        ],
      },
    }),
  );
  const SHORT = 10;
  const LONG = 210;
  const seconds = Math.max(1, SECONDS / 2);
  type Variant = { route: 'to-messages' | 'to-chat'; caller: 'messages' | 'chat'; translated: boolean };
  const variants: Variant[] = [
    { route: 'to-messages', caller: 'messages', translated: false },
    { route: 'to-messages', caller: 'chat', translated: true },
    { route: 'to-chat', caller: 'chat', translated: false },
    { route: 'to-chat', caller: 'messages', translated: true },
  ];
  const label = (v: Variant) =>
    `${v.caller === 'chat' ? 'chat completions' : 'messages'} call to \`${v.route}\`${v.translated ? ' (translated)' : ' (passed through)'}`;
  const spentFrom = cpuSnapshot([]);
  const sums = variants.map(() => ({
    json: [] as number[],
    short: [] as number[],
    long: [] as number[],
    first: [] as number[],
    errors: 0,
  }));
  try {
    for (let round = 1; round <= TRANSLATION_ROUNDS; round++) {
      const server = await startServer(['serve'], { GENWAY_CONFIG: file });
      try {
        const pid = server.child.pid!;
        pin(pid, 1);
        const key = await benchKey(server.base);
        const way = (v: Variant) => ways(v.route, key)[v.caller];
        const bodies = (v: Variant) => ({
          json: way(v).body('Say something about foxes.', false),
          short: way(v).body(`Stream a little. [bench:events=${SHORT}]`, true),
          long: way(v).body(`Stream a lot. [bench:events=${LONG}]`, true),
          paced: way(v).body('Stream at a pace. [bench:paced]', true),
        });
        // Warm-up, unmeasured: every variant's JSON and stream paths JIT-compiled before any slice is taken.
        for (const v of variants) {
          const b = bodies(v);
          for (const kind of ['json', 'short', 'long'] as const)
            await cpuOfWay(server.base, pid, way(v), b[kind], 1);
        }
        for (const kind of ['json', 'short', 'long'] as const) {
          const acc = variants.map(() => ({ cpu: 0, done: 0 }));
          for (let slice = 0; slice < SLICES; slice++) {
            for (const [i, v] of variants.entries()) {
              const r = await cpuOfWay(server.base, pid, way(v), bodies(v)[kind], seconds / SLICES);
              acc[i].cpu += r.cpu;
              acc[i].done += r.done;
              sums[i].errors += r.errors;
            }
          }
          acc.forEach((a, i) => sums[i][kind].push((a.cpu * 1e6) / a.done));
        }
        const firsts = variants.map(() => [] as number[]);
        for (let n = 0; n < FIRST_TOKEN_SAMPLES; n++) {
          for (const [i, v] of variants.entries())
            firsts[i].push(await firstToken(server.base, way(v), bodies(v).paced));
        }
        firsts.forEach((f, i) => sums[i].first.push(median(f)));
        process.stderr.write(
          `translation round ${round}: ${variants.map((v, i) => `${label(v)} ${sums[i].json[round - 1].toFixed(0)} µs/call, ${((sums[i].long[round - 1] - sums[i].short[round - 1]) / (LONG - SHORT)).toFixed(2)} µs/event, first token ${sums[i].first[round - 1].toFixed(3)} ms`).join('; ')}\n`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
  const others = othersNote(spentFrom, cpuSnapshot([]));
  const fmt = (v: number, d = 2) => (Number.isFinite(v) ? v.toFixed(d) : '–');
  const perEvent = (i: number) => sums[i].long.map((l, r) => (l - sums[i].short[r]) / (LONG - SHORT));
  const rows = variants.map((v, i) => {
    const all = (xs: number[], d: number) =>
      `${fmt(median(xs), d)} (${xs.map((x) => fmt(x, d)).join(' / ')})`;
    return `| ${label(v)} | ${all(sums[i].json, 0)} | ${all(perEvent(i), 2)} | ${all(sums[i].first, 3)} | ${sums[i].errors} |`;
  });
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  // Translated against passed through on the same route: the same upstream answer, the same target's events.
  const pairs: [number, number][] = [
    [1, 0],
    [3, 2],
  ];
  const summary = pairs.map(([t, p]) => {
    const ratio = median(sums[t].json) / median(sums[p].json);
    const firstAdded = median(sums[t].first.map((f, r) => f - sums[p].first[r]));
    const eventAdded = median(perEvent(t)) - median(perEvent(p));
    return `- ${label(variants[t])}: ${fmt(ratio)}x the CPU of the ${label(variants[p])} (target ≤ 2x: ${verdict(ratio <= 2)}); ${fmt(eventAdded)} µs more CPU per streamed event; its first token ${fmt(firstAdded * 1000, 0)} µs after the passed-through one's by the wall clock (median of the rounds' differences of medians: noise of milliseconds on this machine, either way; the target is read in process below).`;
  });
  const work = firstTokenWork(5);
  summary.push(
    ...work.map(
      (w) =>
        `- In process, translation's work before the first token (the answer's translator made, the target's head and first text delta translated; the usage tap reads the same bytes passed through or not), ${w.name}: ${fmt(median(w.us))} µs of CPU (${w.us.map((u) => fmt(u)).join(' / ')}; target < 200 µs: ${verdict(median(w.us) < 200)}).`,
    ),
  );
  const text = [
    `\`npm run bench:gateway\` (alone: \`BENCH_PARTS=translation npm run bench:gateway\`). ${machine}. ${TRANSLATION_ROUNDS} rounds, each with a fresh Genway (\`node dist/main.js serve\`, embedded, LOG_LEVEL=warn, pinned to CPU 1; the stand-in bench/upstream.ts and the load on CPU 0), routes \`to-messages\` (the stand-in's messages API) and \`to-chat\` (its chat completions API). Per round, after 1 s of each variant unmeasured: CPU per call at 32 connections (autocannon), ${seconds} s per variant and kind in ${SLICES} slices taken in turns; a JSON call answers about 600 bytes; CPU per streamed event is (CPU per call of a ${LONG}-delta stream − that of a ${SHORT}-delta stream) / ${LONG - SHORT}, each delta written on its own by the stand-in; first token: ${FIRST_TOKEN_SAMPLES} streams per variant in turns, one at a time, whose first text delta the stand-in sends ${SSE_EVENT_GAP_MS} ms after the stream's head, timed to the first byte holding it, medians. CPU is Genway's user+system time from /proc over its slices divided by the calls answered. Medians of the rounds (each round's in brackets). While it ran, ${others} (outside the load generator: Genway's own CPU and the stand-in's count there too).`,
    '',
    '| call | CPU µs per JSON call | CPU µs per streamed event | first token, ms | errors |',
    '| - | - | - | - | - |',
    ...rows,
    '',
    ...summary,
  ].join('\n');
  if (!ONLY_TARGETS && !ONLY_ROUTES) writeSection('LLM gateway: translated calls (issue 34)', text);
  return text;
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
