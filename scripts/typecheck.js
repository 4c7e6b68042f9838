#!/usr/bin/env node
/**
 * `npm run typecheck`: tsc over the server, tests, benches and scripts (tsconfig.json) and over the console
 * (console/tsconfig.json), both at once, emitting nothing. The build (scripts/build.js, esbuild) does not type-check,
 * so this is the step where a type error fails `npm test`, `npm run lint` and CI. Incremental: tsc keeps what it
 * learned in node_modules/.cache/genway, so a second run checks only what changed.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const cache = path.join(root, 'node_modules', '.cache', 'genway');
fs.mkdirSync(cache, { recursive: true });
const tsc = require.resolve('typescript/bin/tsc');
const projects = [
  ['tsconfig.json', 'server.tsbuildinfo'],
  [path.join('console', 'tsconfig.json'), 'console.tsbuildinfo'],
];

const runs = projects.map(
  ([project, info]) =>
    new Promise((resolve) => {
      const args = [
        tsc,
        '--noEmit',
        '-p',
        project,
        '--incremental',
        '--tsBuildInfoFile',
        path.join(cache, info),
      ];
      const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
      child.once('exit', (code, signal) => resolve({ project, ok: code === 0, code, signal }));
    }),
);

Promise.all(runs).then((results) => {
  const failed = results.filter((r) => !r.ok);
  for (const r of failed)
    process.stderr.write(`\ntypecheck: ${r.project} failed (${r.signal ?? `exit ${r.code}`})\n`);
  if (!failed.length) process.stderr.write('typecheck: no type errors\n');
  process.exit(failed.length ? 1 : 0);
});
