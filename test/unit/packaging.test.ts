import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
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
    // README: `npm install && npm start`; npm start is the build (scripts/build.js), then `node <flags> dist/main.js serve`.
    expect(read('README.md')).toContain('npm install && npm start');
    expect(scripts.build).toBe('node scripts/build.js');
    expect(scripts.start).toBe(
      'node scripts/build.js && node --max-semi-space-size=8 --initial-old-space-size=64 dist/main.js serve',
    );
    const runs = args('RUN');
    expect(runs[0]).toBe('npm ci --ignore-scripts');
    expect(runs[1]).toMatch(/^npm run build && /);
    const [entrypoint] = args('ENTRYPOINT');
    const [cmd] = args('CMD');
    const started = [...JSON.parse(entrypoint), ...JSON.parse(cmd)].join(' ');
    expect(`${scripts.build} && ${started}`).toBe(scripts.start);
    // The benches start Genway with the image's node flags (bench/lib.ts), so they measure what is deployed.
    const flags = (JSON.parse(entrypoint) as string[]).slice(1, -1);
    const benched = /DEPLOYED_NODE_FLAGS = \[([^\]]*)\];/.exec(read('bench/lib.ts'))?.[1];
    expect(benched?.split(',').map((f) => f.trim().replace(/^'|'$/g, ''))).toEqual(flags);
    // The build stage has the lockfile before it installs.
    expect(args('COPY')[0]).toBe('package.json package-lock.json ./');
  });

  test('the build stage copies in everything scripts/build.js builds from', () => {
    const copied = args('COPY')
      .filter((a) => !a.startsWith('--from'))
      .flatMap((a) => a.split(/\s+/).slice(0, -1));
    for (const input of ['package-lock.json', 'tsconfig.json', 'scripts', 'src', 'console', 'config'])
      expect(copied).toContain(input);
  });
});

describe('the build (dist/, scripts/build.js)', () => {
  const stub = read('dist/main.js');
  const build = path.join(ROOT, 'dist', /require\('\.\/(builds\/[0-9a-f]+)\/main\.js'\)/.exec(stub)![1]);

  test('dist/main.js and dist/mcp/main.js run the same build', () => {
    expect(read('dist/mcp/main.js')).toContain(
      `require('../${path.relative(path.join(ROOT, 'dist'), build)}/mcp/main.js')`,
    );
  });

  test('at run time needs no dev dependency: every package the bundles require is a dependency', () => {
    const { dependencies } = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    for (const bundle of ['main.js', path.join('mcp', 'main.js')]) {
      const text = readFileSync(path.join(build, bundle), 'utf8');
      const required = new Set(
        [...text.matchAll(/\brequire\("([^"./][^"]*)"\)/g)]
          .map((m) => m[1])
          .filter((name) => !name.startsWith('node:') && !builtinModules.includes(name))
          .map((name) =>
            name
              .split('/')
              .slice(0, name.startsWith('@') ? 2 : 1)
              .join('/'),
          ),
      );
      expect([...required].filter((name) => !(name in dependencies))).toEqual([]);
    }
  });

  test('nothing reaches into dist/ for a single module: it holds only the entry points and the console', () => {
    const offenders: string[] = [];
    const scan = (dir: string) => {
      for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) scan(file);
        else if (/\.(ts|js)$/.test(entry.name)) {
          const text = read(file);
          if (
            /dist\/(?!main\.js|mcp\/main\.js|console|builds\/)[\w./-]+\.js/.test(text) ||
            /'dist',\s*'(?!main\.js|mcp'|console')/.test(text)
          )
            offenders.push(file);
        }
      }
    };
    for (const dir of ['src', 'test', 'bench', 'scripts']) scan(dir);
    expect(offenders).toEqual([]);
  });

  test('holds every runtime asset of src/ at its place under src/', () => {
    for (const asset of [
      'store/redis/lua',
      'logs/postgres/migrations',
      'providers/sandbox/media/placeholder.png',
      'console/index.html',
    ])
      expect(existsSync(path.join(build, asset))).toBe(true);
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
