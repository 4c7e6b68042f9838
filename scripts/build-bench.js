#!/usr/bin/env node
/**
 * The benches' build (every `npm run bench:*`): tsc compiles bench/, src/ and examples/ into build-bench/, one
 * module per file, and the runtime assets under src/ (Lua, SQL migrations, placeholder media) are copied beside
 * their modules, so a bench can build Genway's services in its own process (bench/lib.ts BUILT_SRC). Genway itself,
 * as a process, is dist/main.js from scripts/build.js. Incremental: the tsc state lives in build-bench/, so
 * removing build-bench/ starts over.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { copyAssets } = require('./copy-assets');

const root = path.join(__dirname, '..');
const out = path.join(root, 'build-bench');
execFileSync(
  process.execPath,
  [
    require.resolve('typescript/bin/tsc'),
    '-p',
    'tsconfig.bench.json',
    '--incremental',
    '--tsBuildInfoFile',
    path.join(out, 'tsconfig.tsbuildinfo'),
  ],
  { cwd: root, stdio: 'inherit' },
);
copyAssets(path.join(out, 'src'));
