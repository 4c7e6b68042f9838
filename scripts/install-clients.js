#!/usr/bin/env node
/**
 * Installs the coding CLIs that `npm run test:clients` drives into .clients/ (ignored by git), at the versions below,
 * from the npm registry only; does nothing when they are there already. Each ships its native binary inside a
 * platform package of its own, so no install step downloads anything else.
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DIR = path.join(ROOT, '.clients');
const CLIENTS = {
  '@anthropic-ai/claude-code': '2.1.331',
  '@openai/codex': '0.169.0',
  '@google/gemini-cli': '0.61.0',
};

function installed(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

const missing = Object.entries(CLIENTS).filter(([name, version]) => installed(name) !== version);
if (missing.length === 0) {
  process.stdout.write('coding CLIs already installed in .clients/\n');
} else {
  fs.mkdirSync(DIR, { recursive: true });
  const specs = missing.map(([name, version]) => `${name}@${version}`);
  process.stdout.write(`installing ${specs.join(' ')} into .clients/\n`);
  execFileSync('npm', ['install', '--prefix', DIR, '--no-audit', '--no-fund', '--no-save', ...specs], {
    stdio: 'inherit',
  });
}
