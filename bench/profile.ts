/**
 * npm run bench:profile [-- <other checkout, built>] — where Genway's CPU goes on the hot routes. Runs Genway
 * embedded (BENCH_PROFILE_REDIS=1: on Redis) under V8's sampling profiler (`--cpu-prof`, 50 µs interval) in front of
 * the vendor stand-in, drives each route for 2 s unmeasured, then BENCH_SECONDS at 32 connections (the 100 MiB
 * stream: BENCH_BIG_STREAMS times, after one unmeasured), stops it, and prints the top frames by self time in µs per
 * request (per MiB for the stream). Given another checkout, profiles it the same way, in turns with this one, and
 * prints the frames whose cost changed most: a regression's cause read off two profiles taken in the same minutes of
 * this shared machine. Bounded: routes x builds x BENCH_SECONDS, plus the streams.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { BENCH_SECRETS_KEY, benchKey, dropPrefix, machineNote, REDIS_URL, ROOT, startServer } from './lib';
import { closedLoop, pin, startScript, type Target } from './proxies';
import { BIG_BYTES, HOT_ROUTES } from './upstream-data';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BIG_STREAMS = Number(process.env.BENCH_BIG_STREAMS ?? 3);
const TOP = Number(process.env.BENCH_TOP ?? 25);
const ON_REDIS = process.env.BENCH_PROFILE_REDIS === '1';
const ROUTES = (process.env.BENCH_ROUTES ?? 'messages,chat,stream').split(',');
const VENDOR_KEY = 'sk-bench-vendor';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Self µs per frame (function, file and line), summed over the samples taken between `from` and `to` (µs on the
 * monotonic clock, which V8's profile and process.hrtime share): the load, not the start-up or the shutdown. Idle
 * time is left out: it is not CPU.
 */
function selfTimes(profile: Profile, from: number, to: number): Map<string, number> {
  const frameOf = new Map<number, string>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist|src)\//, '$1/');
    frameOf.set(
      node.id,
      `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim(),
    );
  }
  const self = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at < from || at > to) continue;
    const frame = frameOf.get(profile.samples[i])!;
    if (frame === '(idle)') continue;
    self.set(frame, (self.get(frame) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  return self;
}

async function bigStream(base: string, headers: Record<string, string>): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${base}/v1/messages`, { method: 'POST', headers }, (res) => {
      res.on('data', () => {});
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'claude-bench', stream: true, bench: 'big' }));
  });
}

/** One build's profile on one route: self µs per frame, per request (or per MiB streamed). */
async function profileOnce(main: string, route: string, upstreamPort: number): Promise<Map<string, number>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-prof-'));
  const prefix = `genway-bench-prof-${process.pid}-${Date.now()}`;
  const server = await startServer(
    ['serve'],
    {
      GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstreamPort}`,
      ANTHROPIC_API_KEY: VENDOR_KEY,
      GENWAY_OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}`,
      OPENAI_API_KEY: VENDOR_KEY,
      // BENCH_PROFILE_DATABASE_URL: request logs to that PostgreSQL (each run its own spill directory).
      ...(process.env.BENCH_PROFILE_DATABASE_URL
        ? { DATABASE_URL: process.env.BENCH_PROFILE_DATABASE_URL, GENWAY_LOGS_SPILL_DIR: `${dir}/spill` }
        : {}),
      // BENCH_PROFILE_ENV="K=V K2=V2": more settings for the profiled Genway (GENWAY_LOGS_ENABLED=false, say).
      ...Object.fromEntries(
        (process.env.BENCH_PROFILE_ENV ?? '')
          .split(' ')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      ),
      ...(ON_REDIS ? { REDIS_URL, GENWAY_SECRETS_KEY: BENCH_SECRETS_KEY, GENWAY_STORE_PREFIX: prefix } : {}),
    },
    main,
    ['--cpu-prof', '--cpu-prof-interval', '50', '--cpu-prof-dir', dir],
  );
  pin(server.child.pid!, 1);
  let units = 0;
  let from = 0;
  let to = 0;
  const now = () => Number(process.hrtime.bigint() / 1000n);
  try {
    const key = await benchKey(server.base);
    const target: Target = { name: 'genway', base: server.base, headers: { 'x-api-key': key } };
    if (route === 'stream') {
      const headers = { 'x-api-key': key, 'content-type': 'application/json' };
      // BENCH_PROFILE_WARM=1: 3 s of closed loop on each JSON route first, as bench:gateway runs before its streams.
      if (process.env.BENCH_PROFILE_WARM === '1')
        for (const hot of HOT_ROUTES) await closedLoop(target, hot, 3);
      await bigStream(server.base, headers);
      from = now();
      for (let i = 0; i < BIG_STREAMS; i++) await bigStream(server.base, headers);
      to = now();
      units = (BIG_STREAMS * BIG_BYTES) / 2 ** 20;
    } else {
      const hot = HOT_ROUTES.find((r) => r.name === route);
      if (!hot) throw new Error(`unknown route ${route}`);
      await closedLoop(target, hot, 2); // JIT warm-up, not counted
      from = now();
      units = (await closedLoop(target, hot, SECONDS))['2xx'];
      to = now();
    }
  } finally {
    await server.stop();
    if (ON_REDIS) await dropPrefix(prefix);
  }
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written in ${dir}`);
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Profile;
  // BENCH_PROFILE_KEEP=<dir>: the profiles stay there (for Chrome's DevTools), named by build and route.
  const keep = process.env.BENCH_PROFILE_KEEP;
  if (keep) {
    fs.mkdirSync(keep, { recursive: true });
    fs.copyFileSync(
      path.join(dir, file),
      path.join(keep, `${path.basename(path.dirname(path.dirname(main)))}-${route}.cpuprofile`),
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const perUnit = new Map<string, number>();
  for (const [frame, us] of selfTimes(profile, from, to)) perUnit.set(frame, us / units);
  return perUnit;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

function table(title: string, unit: string, rows: [string, ...string[]][]): string {
  const head = `| frame | ${title} |\n| --- | ${title
    .split(' | ')
    .map(() => '---:')
    .join(' | ')} |`;
  return `${head}\n${rows.map(([frame, ...cells]) => `| \`${frame}\` | ${cells.join(' | ')} |`).join('\n')}\n(${unit})\n`;
}

async function main(): Promise<void> {
  const other = process.argv[2] ? path.join(path.resolve(process.argv[2]), 'dist', 'main.js') : undefined;
  const builds: [string, string][] = [['this', path.join(ROOT, 'dist', 'main.js')]];
  if (other) builds.push(['other', other]);
  const machine = machineNote();
  pin(process.pid, 0);
  const upstream = await startScript('upstream');
  pin(upstream.child.pid!, 0);
  const out: string[] = [
    `bench:profile, ${ON_REDIS ? 'Redis' : 'embedded'}, ${SECONDS} s at 32 connections per route, ${BIG_STREAMS + 1} x 100 MiB streams; ${machine}`,
  ];
  try {
    for (const route of ROUTES) {
      const unit = route === 'stream' ? 'µs of self time per MiB' : 'µs of self time per request';
      const profiles = new Map<string, Map<string, number>>();
      for (const [name, main] of builds) {
        profiles.set(name, await profileOnce(main, route, upstream.port));
        process.stderr.write(`profiled ${name} on ${route}\n`);
      }
      const mine = profiles.get('this')!;
      if (!other) {
        const rows = [...mine].sort((a, b) => b[1] - a[1]).slice(0, TOP);
        out.push(
          `\n### ${route}: ${total(mine).toFixed(1)} ${unit}, top frames\n`,
          table(
            'self',
            unit,
            rows.map(([f, us]) => [f, us.toFixed(2)]),
          ),
        );
        continue;
      }
      const theirs = profiles.get('other')!;
      const frames = new Set([...mine.keys(), ...theirs.keys()]);
      const rows = [...frames]
        .map((f) => [f, mine.get(f) ?? 0, theirs.get(f) ?? 0] as const)
        .sort((a, b) => Math.abs(b[1] - b[2]) - Math.abs(a[1] - a[2]))
        .slice(0, TOP);
      out.push(
        `\n### ${route}: this ${total(mine).toFixed(1)}, other ${total(theirs).toFixed(1)} ${unit}; the frames that moved most\n`,
        table(
          'this | other | this - other',
          unit,
          rows.map(([f, a, b]) => [
            f,
            a.toFixed(2),
            b.toFixed(2),
            (a - b >= 0 ? '+' : '') + (a - b).toFixed(2),
          ]),
        ),
      );
    }
  } finally {
    upstream.child.kill();
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
