/**
 * npm run bench:gateway:ab -- <other checkout> — this checkout's Genway against another build of it (a worktree of
 * the commit before a change, built with `npm run build`), both embedded, beside the bare node:http pipe, in front of
 * the same vendor stand-in, in one run. The three proxies stay pinned to CPU 1 and take their closed-loop slices in
 * turns (bench/proxies.ts), so a change's cost is read against the same seconds of this shared machine. Prints a
 * table (docs/performance.md quotes it where a change is measured); bounded: ROUNDS x routes x 3 x SECONDS.
 * BENCH_AB_REDIS=1 runs both on Redis (each its own key prefix); BENCH_PRICED=1 prices the bench's models, so every
 * call is metered, balance-checked and charged as in a deployment that bills its users.
 */
import path from 'node:path';
import {
  BENCH_SECRETS_KEY,
  dropPrefix,
  flagsFromEnv,
  machineNote,
  median,
  pricedConfig,
  REDIS_URL,
  startServer,
  type Server,
} from './lib';
import { bareTarget, genwayTarget, pin, startScript, throughputs, type Target } from './proxies';
import { HOT_ROUTES } from './upstream-data';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const VENDOR_KEY = 'sk-bench-vendor';
const ON_REDIS = process.env.BENCH_AB_REDIS === '1';
const PRICED = process.env.BENCH_PRICED === '1';
/**
 * BENCH_AB_THIS_FLAGS: Node / V8 flags for this checkout's Genway instead of the deployed ones (`''`: none), an A/B of
 * a runtime setting when the other checkout is this one.
 */
const THIS_FLAGS = flagsFromEnv('BENCH_AB_THIS_FLAGS');

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other) throw new Error('usage: npm run bench:gateway:ab -- <other checkout, built>');
  const machine = machineNote();
  pin(process.pid, 0);
  const upstream = await startScript('upstream');
  pin(upstream.child.pid!, 0);
  const bare = await startScript('bare-proxy', [String(upstream.port)]);
  const env = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
    GENWAY_OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    OPENAI_API_KEY: VENDOR_KEY,
  };
  const prefixes = [`genway-bench-ab-this-${Date.now()}`, `genway-bench-ab-other-${Date.now()}`];
  const priced = pricedConfig('ab');
  const envOf = (prefix: string) => ({
    ...env,
    ...priced.env,
    ...(ON_REDIS ? { REDIS_URL, GENWAY_SECRETS_KEY: BENCH_SECRETS_KEY, GENWAY_STORE_PREFIX: prefix } : {}),
  });
  const servers: Server[] = [];
  try {
    servers.push(await startServer(['serve'], envOf(prefixes[0]), undefined, THIS_FLAGS));
    servers.push(
      await startServer(['serve'], envOf(prefixes[1]), path.join(path.resolve(other), 'dist', 'main.js')),
    );
    const [thisOne, otherOne] = servers;
    const targets: Target[] = [
      bareTarget(bare),
      await genwayTarget('this', thisOne),
      await genwayTarget('other', otherOne),
    ];
    for (const t of targets) pin(t.pid!, 1);
    for (const route of HOT_ROUTES) await throughputs(targets, route, 3, 3); // JIT warm-up, unmeasured
    const ratios: Record<string, { thisVsOther: number[]; thisVsBare: number[]; otherVsBare: number[] }> = {};
    const cpu: Record<string, number[][]> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      for (const route of HOT_ROUTES) {
        const [b, t, o] = await throughputs(targets, route, SECONDS, SLICES);
        const r = (ratios[route.path] ??= { thisVsOther: [], thisVsBare: [], otherVsBare: [] });
        r.thisVsOther.push(t.rps / o.rps);
        r.thisVsBare.push(t.rps / b.rps);
        r.otherVsBare.push(o.rps / b.rps);
        (cpu[route.path] ??= [[], [], []]).forEach((list, i) => list.push([b, t, o][i].cpuUsPerReq));
        process.stderr.write(
          `round ${round} ${route.path}: bare ${b.rps.toFixed(0)}, this ${t.rps.toFixed(0)}, other ${o.rps.toFixed(0)} req/s\n`,
        );
      }
    }
    const x = (v: number[]) => `${median(v).toFixed(3)}x`;
    const rows = HOT_ROUTES.map((route) => {
      const r = ratios[route.path];
      const [b, t, o] = cpu[route.path].map((list) => median(list).toFixed(0));
      return `| ${route.path} | ${x(r.thisVsOther)} (${r.thisVsOther.map((v) => v.toFixed(2)).join(' / ')}) | ${x(r.thisVsBare)} | ${x(r.otherVsBare)} | ${b} / ${t} / ${o} |`;
    });
    process.stdout.write(
      [
        `Both ${ON_REDIS ? 'on Redis' : 'embedded'}, ${PRICED ? "the bench's models priced (every call metered, balance-checked and charged)" : 'models unpriced'}. ${ROUNDS} rounds; per round and route, ${SECONDS} s closed loop at 32 connections per proxy in ${SLICES} slices taken in turns, all three proxies pinned to CPU 1, the load generator and the vendor on CPU 0; ratios of requests/s per round, medians. This checkout: ${machine}; other: ${path.resolve(other)}.`,
        '',
        '| route | this / other (per round) | this / bare | other / bare | CPU µs/req bare / this / other |',
        '| - | - | - | - | - |',
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    priced.remove();
    if (ON_REDIS) for (const prefix of prefixes) await dropPrefix(prefix);
    upstream.child.kill();
    bare.child.kill();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
