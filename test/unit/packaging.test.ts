import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

/**
 * The container image cannot be built on this machine (base images cannot be pulled), so what can be checked without
 * it is checked here: the Dockerfile lints clean, it installs and starts the way the README does, and the lockfile it
 * installs from is complete (npm ci works from it as is, on Linux x64 and arm64).
 */
const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const instructions = DockerfileParser.parse(text).getInstructions();
  const args = (keyword: string) =>
    instructions.filter((i) => i.getKeyword() === keyword).map((i) => i.getArgumentsContent() ?? '');

  test('lints clean with dockerfile-utils', () => {
    expect(validate(text)).toEqual([]);
  });

  test("installs from the lockfile and builds with the README's scripts, then starts what npm start starts", () => {
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    // README: `npm install && npm start`; npm start is `npm run build && node dist/main.js serve`.
    expect(read('README.md')).toContain('npm install && npm start');
    expect(scripts.start).toBe('npm run build && node dist/main.js serve');
    const runs = args('RUN');
    expect(runs[0]).toBe('npm ci --ignore-scripts');
    expect(runs[1]).toMatch(/^npm run build && /);
    const [entrypoint] = args('ENTRYPOINT');
    const [cmd] = args('CMD');
    const started = [...JSON.parse(entrypoint), ...JSON.parse(cmd)].join(' ');
    expect(`npm run build && ${started}`).toBe(scripts.start);
    // The build stage has the lockfile before it installs.
    expect(args('COPY')[0]).toBe('package.json package-lock.json ./');
  });
});

describe('package-lock.json', () => {
  const lock = JSON.parse(read('package-lock.json')) as {
    packages: Record<string, { os?: string[]; cpu?: string[]; optional?: boolean }>;
  };

  test('every native package built for linux x64 is also there for linux arm64', () => {
    const linux = Object.entries(lock.packages).filter(([, p]) => p.os?.includes('linux'));
    const missing = linux
      .filter(([, p]) => p.cpu?.includes('x64'))
      .map(([name]) => name)
      .filter((name) => {
        const arm = name.replace(/x64/g, 'arm64');
        return !lock.packages[arm];
      });
    expect(missing).toEqual([]);
  });

  test('npm install leaves it as it is (nothing to add, nothing to rewrite)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'genway-lock-'));
    try {
      for (const file of ['package.json', 'package-lock.json'])
        copyFileSync(path.join(ROOT, file), path.join(dir, file));
      await promisify(execFile)(
        'npm',
        ['install', '--package-lock-only', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
        { cwd: dir, timeout: 120_000 },
      );
      expect(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).toBe(read('package-lock.json'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
