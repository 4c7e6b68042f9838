/**
 * npm run bench:startup — how long Genway takes from process start to answering /healthz, against the floor of this
 * machine: a bare node:http server answering its own /healthz, started the same way in the same rounds. Rows: Genway
 * embedded and on Redis (`node <DEPLOYED_NODE_FLAGS> dist/main.js serve`, as the image runs it; on Redis also to
 * /readyz, the store answering), and `npm start` on a built, unchanged tree (npm, the build's check, then the same
 * process).
 * Each run's breakdown comes from its `genway listening` line (`startupMs`, src/observability/startup.ts). Rounds
 * interleave the rows, so a busy moment of this shared machine lands on all of them. Medians and p90 of the rounds.
 * BENCH_STARTUP_ROUNDS (default 15).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  BENCH_SECRETS_KEY,
  DEPLOYED_NODE_FLAGS,
  dropPrefix,
  freePort,
  machineNote,
  median,
  REDIS_URL,
  ROOT,
  writeSection,
} from './lib';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 15);
const MAIN = path.join(ROOT, 'dist', 'main.js');
const BARE = `require('node:http').createServer((q, s) => s.end('{"status":"ok"}')).listen(Number(process.env.PORT), '127.0.0.1')`;

interface Row {
  name: string;
  command: string[];
  env?: Record<string, string>;
  /** Also time /readyz (the store answers). */
  ready?: boolean;
  /** Spawned in a process group of its own (npm's children die with it). */
  group?: boolean;
}

interface Sample {
  healthz: number;
  readyz?: number;
  marks?: Record<string, number>;
}

async function until(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function once(row: Row): Promise<Sample> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(row.command[0], row.command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: String(port), LOG_LEVEL: 'info', ...row.env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: row.group,
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  try {
    const deadline = Date.now() + 60_000;
    await until(`${base}/healthz`, deadline);
    const healthz = performance.now() - started;
    let readyz: number | undefined;
    if (row.ready) {
      await until(`${base}/readyz`, deadline);
      readyz = performance.now() - started;
    }
    const line = out.split('\n').find((l) => l.includes('"genway listening"'));
    const marks = line ? (JSON.parse(line) as { startupMs?: Record<string, number> }).startupMs : undefined;
    return { healthz, readyz, marks };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (row.group) process.kill(-child.pid!, 'SIGKILL');
    else child.kill('SIGKILL');
    await exited;
  }
}

function p90(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const machine = machineNote();
  const prefix = `genway-bench-startup-${Date.now()}`;
  const redisEnv = { REDIS_URL, GENWAY_SECRETS_KEY: BENCH_SECRETS_KEY, GENWAY_STORE_PREFIX: prefix };
  const rows: Row[] = [
    { name: 'bare node:http (the floor)', command: [process.execPath, '-e', BARE] },
    { name: 'Genway embedded', command: [process.execPath, ...DEPLOYED_NODE_FLAGS, MAIN, 'serve'] },
    {
      name: 'Genway on Redis',
      command: [process.execPath, ...DEPLOYED_NODE_FLAGS, MAIN, 'serve'],
      env: redisEnv,
      ready: true,
    },
    { name: '`npm start`, built and unchanged', command: ['npm', 'start', '--silent'], group: true },
  ];
  const samples = new Map<Row, Sample[]>(rows.map((r) => [r, []]));
  for (const row of rows) await once(row); // warm the file cache, unmeasured
  for (let round = 1; round <= ROUNDS; round++) {
    for (const row of rows) samples.get(row)!.push(await once(row));
    process.stderr.write(`round ${round}/${ROUNDS}\n`);
  }
  await dropPrefix(prefix);

  const ms = (v: number | undefined) => (v === undefined ? '' : `${v.toFixed(0)} ms`);
  const floor = median(samples.get(rows[0])!.map((s) => s.healthz));
  const steps = ['node', 'main', 'modules', 'config', 'services', 'listen'];
  const table = [
    '| start | to /healthz, median | p90 | over the floor | to /readyz, median | ' +
      steps.map((s) => `${s} (ms since start)`).join(' | ') +
      ' |',
    '| --- | --- | --- | --- | --- | ' + steps.map(() => '---').join(' | ') + ' |',
    ...rows.map((row) => {
      const list = samples.get(row)!;
      const healthz = median(list.map((s) => s.healthz));
      const readyz = row.ready ? median(list.map((s) => s.readyz!)) : undefined;
      const marks = steps.map((step) => {
        const values = list.map((s) => s.marks?.[step]).filter((v): v is number => v !== undefined);
        return values.length ? median(values).toFixed(0) : '';
      });
      return `| ${row.name} | ${ms(healthz)} | ${ms(p90(list.map((s) => s.healthz)))} | ${
        row === rows[0] ? '' : `+${(healthz - floor).toFixed(0)} ms`
      } | ${ms(readyz)} | ${marks.join(' | ')} |`;
    }),
  ].join('\n');
  const body = `${table}\n\n\`npm run bench:startup\`: ${ROUNDS} rounds, each starting every row once in turn (a fresh process, a free port, /healthz polled every 2 ms from the spawn), medians and p90 of the rounds. The marks are each step's end in ms since the process started (src/observability/startup.ts): \`node\` Node's own boot, \`main\` the bundle parsed, \`modules\` the server's modules loaded, \`config\` read and checked, \`services\` built (stores, queues; Redis connections begun, not awaited: /readyz says when Redis answers), \`listen\` the port open. ${machine}.`;
  process.stdout.write(`${body}\n`);
  if (process.env.BENCH_WRITE !== '0') writeSection('Start-up', body);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
