/**
 * npm run bench:logs:gateway — the gateway with request logs written to PostgreSQL against the same build with
 * request logs off (GENWAY_LOGS_ENABLED=false), and with the in-process ring (no database), beside the bare node:http
 * pipe, in front of the same vendor stand-in, in one run: the cost of a row per call. The proxies are pinned to CPU 1
 * and take their closed-loop slices in turns (bench/proxies.ts), as bench:gateway does. The database is a PostgreSQL
 * of the run's own pinned to CPU 0 with the vendor and the load generator (what is measured is Genway's share, as
 * with the vendor stand-in), or a database created on BENCH_DATABASE_URL's server and dropped at the end.
 * BENCH_ROUNDS=0 leaves the closed loop out.
 * Bounded: routes x (ROUNDS x 4 x SECONDS + PACED_SETS x (4 x 2 + (PACED_ROUNDS + 1) x BENCH_PACED_SECONDS)), and
 * BENCH_PACED_SECONDS once to fit the open loop's rate.
 */
import { Client } from 'pg';
import {
  machineNote,
  median,
  pacedTogether,
  procCpuSeconds,
  startServer,
  type PacedStream,
  type Server,
} from './lib';
import {
  bareTarget,
  genwayTarget,
  pin,
  routeHeaders,
  startScript,
  throughputs,
  type Target,
} from './proxies';
import { HOT_ROUTES } from './upstream-data';
import { benchDatabase } from './pg-server';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const VENDOR_KEY = 'sk-bench-vendor';
/**
 * The same request rate for every target (open loop): Genway's CPU per call then compares builds at one load. In the
 * closed loop, PostgreSQL's own work on CPU 0 slows the load generator that shares it, and a proxy answering fewer
 * calls per wake-up pays more per call: that part is the database's, not the row's. BENCH_LOGS_RATE (1,200 req/s
 * each) is where the run starts; the first set measures the CPU-seconds a second the four Genways need at it, and
 * past BUSY_AT_MOST the rate is lowered for the whole run so that they need that much. An overloaded CPU queues
 * requests, and the figures are then of the overload: on a host where a call cost about 350 µs, 1,200 each needed 1.7
 * CPU-seconds a second and read +6.8 % / +8.1 % for PostgreSQL against logs off, where 700 each read +4.3 % / +3.7 %.
 */
const START_RATE = Number(process.env.BENCH_LOGS_RATE ?? 1200);
/** The share of CPU 1 the four Genways may use at the open loop's rate. */
const BUSY_AT_MOST = 0.8;
const PACED_SECONDS = Number(process.env.BENCH_PACED_SECONDS ?? 4);
/** Open-loop sets of fresh Genways, and measured rounds per set (each BENCH_PACED_SECONDS per route). */
const PACED_SETS = Number(process.env.BENCH_PACED_SETS ?? 6);
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 2);

async function main(): Promise<void> {
  const machine = machineNote();
  pin(process.pid, 0);
  const upstream = await startScript('upstream');
  pin(upstream.child.pid!, 0);
  const bare = await startScript('bare-proxy', [String(upstream.port)]);
  // A database server of the run's own, on CPU 0 with the vendor and the load: what is measured is Genway's share.
  const database = await benchDatabase('genway_bench_gateway_logs', { cpu: 0 });
  const { own, url } = database;
  const env = {
    GENWAY_ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    ANTHROPIC_API_KEY: VENDOR_KEY,
    GENWAY_OPENAI_BASE_URL: `http://127.0.0.1:${upstream.port}`,
    OPENAI_API_KEY: VENDOR_KEY,
  };
  const servers: Server[] = [];
  try {
    servers.push(await startServer(['serve'], { ...env, GENWAY_LOGS_ENABLED: 'false' }));
    servers.push(await startServer(['serve'], { ...env, DATABASE_URL: url }));
    servers.push(await startServer(['serve'], env));
    const [off, postgres, ring] = servers;
    const targets: Target[] = [
      bareTarget(bare),
      await genwayTarget('off', off),
      await genwayTarget('postgres', postgres),
      await genwayTarget('ring', ring),
    ];
    for (const t of targets) pin(t.pid!, 1);
    const dbCpuBefore = own?.cpuSeconds();
    for (const route of HOT_ROUTES) await throughputs(targets, route, 3, 3); // JIT warm-up, unmeasured
    const ratios: Record<string, { pgVsOff: number[]; ringVsOff: number[]; offVsBare: number[] }> = {};
    const cpu: Record<string, number[][]> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      for (const route of HOT_ROUTES) {
        const [b, o, p, r] = await throughputs(targets, route, SECONDS, SLICES);
        const x = (ratios[route.path] ??= { pgVsOff: [], ringVsOff: [], offVsBare: [] });
        x.pgVsOff.push(p.rps / o.rps);
        x.ringVsOff.push(r.rps / o.rps);
        x.offVsBare.push(o.rps / b.rps);
        (cpu[route.path] ??= [[], [], [], []]).forEach((list, i) => list.push([b, o, p, r][i].cpuUsPerReq));
        process.stderr.write(
          `round ${round} ${route.path}: bare ${b.rps.toFixed(0)}, off ${o.rps.toFixed(0)}, postgres ${p.rps.toFixed(0)}, ring ${r.rps.toFixed(0)} req/s\n`,
        );
      }
    }
    const counted = new Client({ connectionString: url });
    await counted.connect();
    const rowsNow = async () =>
      Number((await counted.query('SELECT count(*) AS n FROM request_logs')).rows[0].n);
    // The database's own CPU per row over the closed loop, on the CPU the load generator and the vendor share: what
    // slows it. Read while the Genway's connections live (a backend's CPU goes with it), after its last flush.
    await new Promise((r) => setTimeout(r, 1000));
    const closedRows = await rowsNow();
    const dbNote =
      own && dbCpuBefore !== undefined && closedRows > 0
        ? ` Over the closed loop, the PostgreSQL server used ${(((own.cpuSeconds() - dbCpuBefore) * 1e6) / closedRows).toFixed(1)} µs of CPU per row written (its live processes, on CPU 0).`
        : '';
    // The closed loop's Genways are done: the open loop starts its own, fresh for each set.
    await Promise.all(servers.splice(0).map((s) => s.stop()));
    const variants: { name: string; env: Record<string, string> }[] = [
      { name: 'off', env: { ...env, GENWAY_LOGS_ENABLED: 'false' } },
      { name: 'postgres', env: { ...env, DATABASE_URL: url } },
      { name: 'ring', env },
      // The control: logs off again, whose ratio to the first is the measure's own spread.
      { name: 'off again', env: { ...env, GENWAY_LOGS_ENABLED: 'false' } },
    ];
    /** Per route, per variant: its CPU per call in each measured round (the same rounds, in order, for all four). */
    const atRate: Record<string, number[][]> = {};
    let rate = START_RATE;
    let startNeed = 0;
    for (let set = 0; set < PACED_SETS; set++) {
      // Started in another order each set: a process's own luck (its memory's layout, its JIT's choices) moves its
      // CPU per call by a few %, so each set's Genways are new ones.
      const genways: Target[] = variants.map(() => undefined as unknown as Target);
      for (let k = 0; k < variants.length; k++) {
        const i = (k + set) % variants.length;
        const server = await startServer(['serve'], variants[i].env);
        servers.push(server);
        genways[i] = await genwayTarget(variants[i].name, server);
        pin(genways[i].pid!, 1);
      }
      for (const route of HOT_ROUTES) await throughputs(genways, route, 2, 2); // JIT warm-up, unmeasured
      const streamOf = (i: number, route: (typeof HOT_ROUTES)[number]): PacedStream => ({
        url: `${genways[i].base}${route.path}`,
        method: 'POST',
        headers: routeHeaders(genways[i], route),
        body: route.body,
      });
      if (set === 0) {
        // The CPU-seconds a second the four need at the starting rate (their CPU over the schedule's seconds, which an
        // overload stretches: then more than 1): past BUSY_AT_MOST, the run's rate is lowered to fit.
        const before = genways.map((t) => procCpuSeconds(t.pid!));
        await pacedTogether(
          genways.map((_, i) => streamOf(i, HOT_ROUTES[0])),
          START_RATE,
          PACED_SECONDS,
        );
        startNeed =
          genways.reduce((sum, t, i) => sum + procCpuSeconds(t.pid!) - before[i], 0) / PACED_SECONDS;
        if (startNeed > BUSY_AT_MOST)
          rate = Math.max(50, Math.floor((START_RATE * BUSY_AT_MOST) / startNeed / 50) * 50);
        process.stderr.write(
          `open loop: ${startNeed.toFixed(2)} CPU-seconds a second at ${START_RATE} req/s each; the run uses ${rate}\n`,
        );
      }
      // Round 0 is the open loop's own warm-up, unmeasured.
      for (let round = 0; round <= PACED_ROUNDS; round++) {
        for (const route of HOT_ROUTES) {
          // The four in one schedule, starting at another Genway each round: none always follows the same one.
          const order = genways.map((_, i) => (i + round + set) % genways.length);
          const before = genways.map((t) => procCpuSeconds(t.pid!));
          const results = await pacedTogether(
            order.map((i) => streamOf(i, route)),
            rate,
            PACED_SECONDS,
          );
          const perCall = genways.map((t, i) => {
            const calls = rate * PACED_SECONDS - results[order.indexOf(i)].errors;
            return ((procCpuSeconds(t.pid!) - before[i]) * 1e6) / calls;
          });
          if (round === 0) continue;
          perCall.forEach((v, i) => (atRate[route.path] ??= [[], [], [], []])[i].push(v));
        }
      }
      await Promise.all(servers.splice(0).map((s) => s.stop()));
    }
    const written = await rowsNow();
    await counted.end();
    // BENCH_ROUNDS=0: no closed loop, its columns say so instead of NaN.
    const f = (v: number[]) => (v.length ? `${median(v).toFixed(3)}x` : '–');
    const table = HOT_ROUTES.map((route) => {
      const x = ratios[route.path] ?? { pgVsOff: [], ringVsOff: [], offVsBare: [] };
      const [b, o, p, r] = (cpu[route.path] ?? [[], [], [], []]).map((list) =>
        list.length ? median(list).toFixed(0) : '–',
      );
      const [off, pg, ringAt, again] = atRate[route.path].map(median);
      // Each variant against logs off, round by round (the four ran over the same seconds).
      const [offs, ...others] = atRate[route.path];
      const [yPg, yRing, yControl] = others.map((rounds) => rounds.map((v, k) => v / offs[k]));
      const pct = (v: number) => `${v >= 1 ? '+' : ''}${((v - 1) * 100).toFixed(1)}%`;
      return `| ${route.path} | ${f(x.pgVsOff)}${x.pgVsOff.length ? ` (${x.pgVsOff.map((v) => v.toFixed(2)).join(' / ')})` : ''} | ${f(x.ringVsOff)} | ${f(x.offVsBare)} | ${b} / ${o} / ${p} / ${r} | ${off.toFixed(1)} / ${pg.toFixed(1)} / ${ringAt.toFixed(1)} / ${again.toFixed(1)} | ${pct(median(yPg))} (${yPg.map(pct).join(' / ')}) | ${pct(median(yRing))} | ${pct(median(yControl))} (${yControl.map(pct).join(' / ')}) |`;
    });
    process.stdout.write(
      [
        `Embedded, models unpriced. ${ROUNDS} rounds; per round and route, ${SECONDS} s closed loop at 32 connections per proxy in ${SLICES} slices taken in turns, the proxies pinned to CPU 1, the load generator, the vendor and ${own ? 'a PostgreSQL of the run' : 'PostgreSQL'} on CPU 0; then ${PACED_SETS} sets of four fresh Genways (the fourth a control: logs off again; started in another order each set, warmed up), each set ${PACED_ROUNDS} rounds of ${PACED_SECONDS} s open loop per route, the four at ${rate} req/s each in one schedule${rate < START_RATE ? ` (lowered from ${START_RATE}, where the four needed ${startNeed.toFixed(2)} CPU-seconds a second of CPU 1)` : ''} (their requests take turns, from another Genway each round), each one's CPU per call read from /proc over the same seconds. ${written.toLocaleString('en')} rows written to PostgreSQL in the run.${dbNote} ${machine}`,
        '',
        `| route | logs to PostgreSQL / logs off (per round) | ring / off | off / bare | CPU µs/req bare / off / postgres / ring | CPU µs/call at ${rate} req/s: off / postgres / ring / off again | CPU per call, PostgreSQL against off, median of rounds (per round) | ring against off | control: off again against off (per round) |`,
        '| - | - | - | - | - | - | - | - | - |',
        ...table,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database.drop();
    upstream.child.kill();
    bare.child.kill();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
