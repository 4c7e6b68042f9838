/**
 * npm run bench:tasks — accepted task submissions per second and submit latency, embedded and on Redis, next to the
 * same server's /healthz as the floor, measured in one run (rounds interleaved, medians reported).
 */
import {
  cpuSnapshot,
  drainQueues,
  load,
  machineNote,
  median,
  othersNote,
  paced,
  startPair,
  writeSection,
  type LoadResult,
  type PacedResult,
} from './lib';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
/** Latency is also measured below saturation: an open loop at this rate (a closed loop at full load measures queueing). */
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 400);
const PACED_SECONDS = 4;

async function main(): Promise<void> {
  const machine = machineNote();
  const servers = await startPair('tasks');
  const { keys, prefix } = servers;
  const results: Record<string, { health: LoadResult[]; submit: LoadResult[]; paced: PacedResult[] }> = {
    embedded: { health: [], submit: [], paced: [] },
    redis: { health: [], submit: [], paced: [] },
  };
  const drains: number[] = [];
  let others = '';
  try {
    const before = cpuSnapshot(servers.pids);
    const body = JSON.stringify({ input: { mode: 'text-to-image', prompt: '[sandbox:delay=600000] a fox' } });
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['embedded', 'redis'] as const) {
        const base = servers[mode].base;
        const submit = {
          url: `${base}/api/v1/generateTask/image-gen`,
          method: 'POST' as const,
          headers: { authorization: `Bearer ${keys[mode]}`, 'content-type': 'application/json' },
          body,
        };
        results[mode].health.push(
          await load({ url: `${base}/healthz`, connections: CONNECTIONS, seconds: SECONDS }),
        );
        results[mode].submit.push(await load({ ...submit, connections: CONNECTIONS, seconds: SECONDS }));
        // The in-process worker may still be starting the submitted tasks: let it finish before the next row.
        if (mode === 'redis') drains.push(await drainQueues(prefix));
        results[mode].paced.push(await paced({ ...submit, rate: PACED_RATE, seconds: PACED_SECONDS }));
        if (mode === 'redis') await drainQueues(prefix);
        process.stderr.write(
          `round ${round} ${mode}: submit ${results[mode].submit.at(-1)!.rps.toFixed(0)}/s\n`,
        );
      }
    }
    others = othersNote(before, cpuSnapshot(servers.pids));
  } finally {
    await servers.stop();
  }

  const row = (mode: string, what: string, rs: LoadResult[]) =>
    `| ${mode} | ${what} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${median(rs.map((r) => r.p50)).toFixed(1)} | ${median(rs.map((r) => r.p99)).toFixed(1)} | ${rs.reduce((n, r) => n + r.errors, 0)} |`;
  const ratio = (mode: 'embedded' | 'redis') =>
    (median(results[mode].submit.map((r) => r.rps)) / median(results[mode].health.map((r) => r.rps))) * 100;
  const table = [
    `${ROUNDS} interleaved rounds of ${SECONDS} s each, ${CONNECTIONS} connections (autocannon, loopback), medians; image-gen submissions (charged, task written, progress job enqueued and run by the in-process worker) against the same server's /healthz. ${machine}; while it ran ${others}.`,
    '',
    '| store | endpoint | req/s | p50 ms | p99 ms | non-2xx |',
    '| - | - | - | - | - | - |',
    row('embedded', 'GET /healthz (floor)', results.embedded.health),
    row('embedded', 'POST /generateTask', results.embedded.submit),
    row('redis', 'GET /healthz (floor)', results.redis.health),
    row('redis', 'POST /generateTask', results.redis.submit),
    '',
    `Submit latency below saturation (open loop at ${PACED_RATE}/s for ${PACED_SECONDS} s per round, medians of the rounds):`,
    '',
    '| store | p50 ms | p99 ms | errors |',
    '| - | - | - | - |',
    ...(['embedded', 'redis'] as const).map(
      (mode) =>
        `| ${mode} | ${median(results[mode].paced.map((r) => r.p50)).toFixed(2)} | ${median(results[mode].paced.map((r) => r.p99)).toFixed(2)} | ${results[mode].paced.reduce((n, r) => n + r.errors, 0)} |`,
    ),
    '',
    `Submissions run at ${ratio('embedded').toFixed(0)}% of the /healthz floor embedded and ${ratio('redis').toFixed(0)}% on Redis. After each ${SECONDS} s Redis row the worker needed a further ${(median(drains) / 1000).toFixed(1)} s (median) to start the accepted tasks (waited for before the next row). Targets: at least 2,000 submissions/s embedded and 1,000/s on Redis, p99 under 20 ms.`,
  ].join('\n');
  writeSection('Task API', table);
  process.stdout.write(`${table}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
