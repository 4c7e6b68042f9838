/**
 * npm run bench:gateway:instructions — what one proxied call costs in CPU instructions, counted by valgrind's
 * callgrind: the bare node:http pipe, Genway embedded and Genway on Redis, each in front of the same vendor
 * stand-in. Instruction counts do not depend on what else the (shared, noisy) machine is doing, so this table
 * compares the proxies' own work where wall-clock throughput only can within its noise. Kernel time (the same
 * two reads and two writes per call for every proxy, checked with strace) is not in it.
 *
 * Each proxy runs under callgrind with `node --single-threaded` (V8's compiler and GC on the main thread: all
 * its work is counted, in order). It is warmed with WARM calls per route, then for each route the counters are
 * zeroed, CALLS calls are made (8 connections) and the instructions are read back, WINDOWS times: the median
 * window per call, steady state. Then, per target, one 100 MiB stream down unmeasured and STREAMS more, each counted:
 * instructions per MiB, the median. Bounded: (WARM + WINDOWS x CALLS) calls per route and target and 1 + STREAMS
 * streams, loopback only.
 * BENCH_PRICED=1 prices the bench's models (every Genway call metered, balance-checked and charged) and writes its own
 * section. BENCH_TARGETS (bare,embedded,redis; `undici`, bench/bare-undici.ts, when named) picks the targets; naming
 * `logs-off` (embedded, GENWAY_LOGS_ENABLED=false) and `postgres` (embedded, request logs to a database created on
 * BENCH_DATABASE_URL's server, the machine's by default, and dropped after) counts what a request-log row costs
 * Genway itself: the database's work is another process's, not counted.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import {
  benchKey,
  dropPrefix,
  freePort,
  machineNote,
  median,
  REDIS_URL,
  BENCH_SECRETS_KEY,
  ADMIN,
  pricedConfig,
  ROOT,
  writeSection,
} from './lib';
import { benchDatabase, type BenchDatabase } from './pg-server';
import { HOT_ROUTES } from './upstream-data';

const WARM = Number(process.env.BENCH_WARM_CALLS ?? 8000);
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
/** Windows of CALLS calls per route and target: the median window is reported (a JIT compile or a major GC lands in one). */
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 5);
const VENDOR_KEY = 'sk-bench-vendor';
/** 100 MiB streams counted per target, after one unmeasured (BENCH_STREAMS=0: none). */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 3);

/** One 100 MiB stream of the stand-in through the target (its `bench: 'big'` answer), read to its end. */
function bigStream(target: Target): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${target.base}/v1/messages`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...target.headers } },
      (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'claude-bench', stream: true, bench: 'big' }));
  });
}

/** Starts a process; resolves once `ready()` says so (callgrind makes start-up slow: up to two minutes). */
async function start(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: (out: () => string) => Promise<boolean>,
): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    if (await ready(() => out).catch(() => false)) return { child, out: () => out };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${args.join(' ')} did not start`);
}

const healthy = (base: string) => async () => (await fetch(`${base}/healthz`)).ok;

/** The instructions the process has executed since its counters were last zeroed, all threads. */
function instructions(pid: number): number {
  const text = execFileSync('callgrind_control', ['-e', 'Ir', String(pid)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let total = 0;
  for (const m of text.matchAll(/Th\s+\d+\s+([\d,]+)/g)) total += Number(m[1].replace(/,/g, ''));
  return total;
}

function calls(
  base: string,
  headers: Record<string, string>,
  route: (typeof HOT_ROUTES)[number],
  amount: number,
) {
  return autocannon({
    url: `${base}${route.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: route.body,
    connections: 8,
    amount,
    timeout: 60,
  });
}

interface Target {
  name: string;
  base: string;
  headers: Record<string, string>;
  child: ChildProcess;
}

const callgrind = (outDir: string) => [
  '--tool=callgrind',
  `--callgrind-out-file=${outDir}/callgrind.%p`,
  '--dump-instr=no',
  '--collect-jumps=no',
  process.execPath,
  '--single-threaded',
];

async function genway(name: string, env: Record<string, string>, outDir: string): Promise<Target> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { child } = await start(
    'valgrind',
    [...callgrind(outDir), path.join(ROOT, 'dist', 'main.js'), 'serve'],
    { PORT: String(port), LOG_LEVEL: 'warn', GENWAY_ADMIN_TOKEN: ADMIN, ...env },
    healthy(base),
  );
  const key = await benchKey(base);
  return { name, base, headers: { 'x-api-key': key, authorization: `Bearer ${key}` }, child };
}

async function main(): Promise<void> {
  const machine = machineNote();
  const outDir = execFileSync('mktemp', ['-d'], { encoding: 'utf8' }).trim();
  const upstream = spawn(process.execPath, [path.join(__dirname, 'upstream.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const upstreamPort = await new Promise<number>((resolve) =>
    upstream.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  const vendorEnv = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstreamPort}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
    GENWAY_OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}`,
    OPENAI_API_KEY: VENDOR_KEY,
  };
  const prefix = `genway-bench-instr-${Date.now()}`;
  const priced = pricedConfig('instructions');
  const names = (process.env.BENCH_TARGETS ?? 'bare,embedded,redis').split(',');
  /** Databases of the run, dropped at its end. */
  const databases: BenchDatabase[] = [];
  const results: { name: string; perCall: Record<string, number>; perMiB: number }[] = [];
  const spread: string[] = [];
  try {
    // A bare pipe prints its port once it listens.
    const barePipe = async (name: string, script: string): Promise<Target> => {
      const { child, out } = await start(
        'valgrind',
        [...callgrind(outDir), path.join(__dirname, script), String(upstreamPort)],
        {},
        async (text) => /^\d+\n/.test(text()),
      );
      const base = `http://127.0.0.1:${/^(\d+)/.exec(out())![1]}`;
      return { name, base, headers: { 'x-api-key': 'gwk-bench', authorization: 'Bearer gwk-bench' }, child };
    };
    const makers: Record<string, () => Promise<Target>> = {
      bare: () => barePipe('bare', 'bare-proxy.js'),
      undici: () => barePipe('undici', 'bare-undici.js'),
      embedded: () => genway('embedded', { ...vendorEnv, ...priced.env }, outDir),
      'logs-off': () =>
        genway('logs-off', { ...vendorEnv, ...priced.env, GENWAY_LOGS_ENABLED: 'false' }, outDir),
      postgres: async () => {
        const database = await benchDatabase('genway_bench_instr', {
          server: 'postgres://postgres@127.0.0.1:5432/postgres',
        });
        databases.push(database);
        const url = database.url;
        // Batches of logs.batchRows (2,000), as the writer sends them at the gateway's real rates: under callgrind a
        // call is some 50 times slower, and the 500 ms timer would send batches of a few dozen rows.
        const config = path.join(outDir, 'logs.json');
        fs.writeFileSync(config, JSON.stringify({ logs: { flushMs: 600_000 } }));
        if (priced.env.GENWAY_CONFIG)
          throw new Error('postgres: BENCH_PRICED=1 is not supported with this target');
        return genway('postgres', { ...vendorEnv, DATABASE_URL: url, GENWAY_CONFIG: config }, outDir);
      },
      redis: () =>
        genway(
          'redis',
          {
            ...vendorEnv,
            ...priced.env,
            REDIS_URL,
            GENWAY_SECRETS_KEY: BENCH_SECRETS_KEY,
            GENWAY_STORE_PREFIX: prefix,
          },
          outDir,
        ),
    };
    for (const name of names) {
      const make = makers[name];
      if (!make) throw new Error(`BENCH_TARGETS: unknown target ${name} (${Object.keys(makers).join(', ')})`);
      const target = await make();
      try {
        for (const route of HOT_ROUTES) await calls(target.base, target.headers, route, WARM);
        const perCall: Record<string, number> = {};
        for (const route of HOT_ROUTES) {
          const windows: number[] = [];
          for (let w = 0; w < WINDOWS; w++) {
            execFileSync('callgrind_control', ['-z', String(target.child.pid)], { stdio: 'ignore' });
            const result = await calls(target.base, target.headers, route, CALLS);
            if (result['2xx'] !== CALLS)
              throw new Error(`${target.name} ${route.path}: ${result['2xx']} of ${CALLS} answered`);
            windows.push(instructions(target.child.pid!) / CALLS);
          }
          perCall[route.name] = median(windows);
          spread.push(
            `${target.name} ${route.name} ${windows.map((n) => (n / 1000).toFixed(0)).join(' / ')}`,
          );
          process.stderr.write(
            `${target.name} ${route.path}: ${Math.round(perCall[route.name])} instructions per call (median of ${WINDOWS} windows)\n`,
          );
        }
        const streams: number[] = [];
        if (STREAMS > 0) await bigStream(target); // its stream path compiled
        for (let i = 0; i < STREAMS; i++) {
          execFileSync('callgrind_control', ['-z', String(target.child.pid)], { stdio: 'ignore' });
          const bytes = await bigStream(target);
          streams.push(instructions(target.child.pid!) / (bytes / 2 ** 20));
        }
        const perMiB = STREAMS > 0 ? median(streams) : NaN;
        if (STREAMS > 0) {
          spread.push(`${target.name} stream ${streams.map((n) => (n / 1e6).toFixed(2)).join(' / ')}M`);
          process.stderr.write(`${target.name} stream: ${(perMiB / 1e6).toFixed(2)}M instructions per MiB\n`);
        }
        results.push({ name: target.name, perCall, perMiB });
      } finally {
        target.child.kill('SIGKILL');
      }
    }
  } finally {
    upstream.kill();
    priced.remove();
    for (const database of databases) await database.drop();
    await dropPrefix(prefix).catch(() => 0);
    execFileSync('rm', ['-rf', outDir]);
  }

  const bare = results.find((r) => r.name === 'bare');
  const k = (n: number) => `${(n / 1000).toFixed(0)}k`;
  const ratio = (n: number, route: string) => (bare ? ` (${(n / bare.perCall[route]).toFixed(2)}x)` : '');
  const perMiB = (r: (typeof results)[number]) =>
    STREAMS > 0
      ? ` | ${(r.perMiB / 1e6).toFixed(2)}M${bare ? ` (${(r.perMiB / bare.perMiB).toFixed(2)}x)` : ''}`
      : '';
  const rows = results.map(
    (r) =>
      `| ${r.name} | ${HOT_ROUTES.map((route) => `${k(r.perCall[route.name])}${ratio(r.perCall[route.name], route.name)}`).join(' | ')}${perMiB(r)} |`,
  );
  const pricedNote =
    process.env.BENCH_PRICED === '1'
      ? " Genway prices the bench's models (BENCH_PRICED=1): every call is metered, balance-checked and charged."
      : '';
  const table = [
    `Instructions per proxied call, counted by valgrind callgrind (\`node --single-threaded\`, so V8's compiler and garbage collector are counted with the rest), after ${WARM} warm-up calls per route; per target and route, the median of ${WINDOWS} windows of ${CALLS} calls at 8 connections${STREAMS > 0 ? `, then the median of ${STREAMS} 100 MiB streams after one unmeasured` : ''} (a JIT compile or a major collection lands in one window: each window, in k, ${spread.join('; ')}); in parentheses, against the bare node:http pipe. User space only: the kernel's share is the same two reads and two writes per call for every proxy.${pricedNote} ${machine}.`,
    '',
    `| target | ${HOT_ROUTES.map((r) => r.path).join(' | ')}${STREAMS > 0 ? ' | 100 MiB stream, per MiB' : ''} |`,
    `| - | ${HOT_ROUTES.map(() => '-').join(' | ')}${STREAMS > 0 ? ' | -' : ''} |`,
    ...rows,
  ].join('\n');
  writeSection(
    process.env.BENCH_PRICED === '1'
      ? 'LLM gateway: instructions per call, priced models'
      : 'LLM gateway: instructions per call',
    table,
  );
  process.stdout.write(`${table}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
