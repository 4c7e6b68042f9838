/**
 * npm run bench:build — wall time of `npm run build` (scripts/build.js) cold (no dist/), on an unchanged tree, and
 * after one source file changed, beside the type-check that left the build for `npm run typecheck` (cold and
 * incremental), in one run. Runs in a scratch copy of the checkout (node_modules linked), so this checkout's dist/
 * and anything running from it are left alone. BENCH_BUILD_ROUNDS (default 5).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machineNote, median, ROOT, writeSection } from './lib';

const ROUNDS = Number(process.env.BENCH_BUILD_ROUNDS ?? 5);
const COPIED = [
  'src',
  'console',
  'scripts',
  'config',
  'test',
  'bench',
  'examples',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

/** `npm run <script>` in `dir`, as a person types it (npm's own start included), in ms. */
function timed(dir: string, script: 'build' | 'typecheck'): number {
  const started = performance.now();
  const run = spawnSync('npm', ['run', '--silent', script], { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`npm run ${script} failed: ${run.stderr}`);
  return performance.now() - started;
}

function main(): void {
  const machine = machineNote();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-bench-build-'));
  try {
    for (const entry of COPIED) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const changed = path.join(dir, 'src', 'money.ts');
    const original = fs.readFileSync(changed, 'utf8');
    const times = { cold: [] as number[], unchanged: [] as number[], oneFile: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      fs.rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
      times.cold.push(timed(dir, 'build'));
      times.unchanged.push(timed(dir, 'build'));
      fs.writeFileSync(changed, `${original}\n// bench:build round ${round}\n`);
      times.oneFile.push(timed(dir, 'build'));
      fs.writeFileSync(changed, original);
      process.stderr.write(`round ${round}/${ROUNDS}\n`);
    }
    // scripts/typecheck.js keeps tsc's state under node_modules/.cache: the scratch copy gets a cache of its own.
    fs.rmSync(path.join(dir, 'node_modules'));
    fs.mkdirSync(path.join(dir, 'node_modules'));
    for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules')))
      if (entry !== '.cache')
        fs.symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(dir, 'node_modules', entry));
    const typecheckCold = timed(dir, 'typecheck');
    const typecheckUnchanged = timed(dir, 'typecheck');
    fs.writeFileSync(changed, `${original}\n// bench:build typecheck\n`);
    const typecheckIncremental = timed(dir, 'typecheck');

    const s = (v: number) => `${(v / 1000).toFixed(2)} s`;
    const body = [
      '| step | wall time, median |',
      '| --- | --- |',
      `| \`npm run build\`, cold (no dist/) | ${s(median(times.cold))} |`,
      `| \`npm run build\`, tree unchanged | ${s(median(times.unchanged))} |`,
      `| \`npm run build\`, one source file changed | ${s(median(times.oneFile))} |`,
      `| \`npm run typecheck\` (no longer in the build), cold | ${s(typecheckCold)} |`,
      `| \`npm run typecheck\`, tree unchanged (incremental) | ${s(typecheckUnchanged)} |`,
      `| \`npm run typecheck\`, src/money.ts changed (incremental; most modules import it) | ${s(typecheckIncremental)} |`,
      '',
      `\`npm run bench:build\`: ${ROUNDS} rounds in a scratch copy of the checkout, each a cold build, an unchanged one and one after src/money.ts changed; the type-check once cold, once unchanged, once after the same change (both projects at once, scripts/typecheck.js). The build before issue 32 (delete dist/, tsc type-check and emit, the console's type-check and bundle) took 11.4 s of wall time and 17.4 s of CPU on a quiet moment of this machine, every time. ${machine}.`,
    ].join('\n');
    process.stdout.write(`${body}\n`);
    if (process.env.BENCH_WRITE !== '0') writeSection('Build', body);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
