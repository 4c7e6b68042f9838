import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Ports below, adapters above: each domain folder declares the store interface it needs (`tasks/store.ts`, ...) and
 * every implementation lives under `src/store/`. Only `src/services.ts` wires adapters to ports, so no other file
 * outside `src/store/` may import from it.
 */
const SRC = path.resolve(__dirname, '../../src');
const STORE = path.join(SRC, 'store');
const WIRING = new Set([path.join(SRC, 'services.ts')]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:import|export)[^'";]*?from '(\.[^']+)'/g)].map((m) =>
    path.resolve(path.dirname(file), m[1]),
  );
}

test('no file outside src/store/ but services.ts imports from src/store/', () => {
  const crossings: string[] = [];
  for (const file of sources(SRC)) {
    if (file.startsWith(STORE + path.sep) || WIRING.has(file)) continue;
    for (const target of relativeImports(file)) {
      if (target === STORE || target.startsWith(STORE + path.sep))
        crossings.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`);
    }
  }
  expect(crossings).toEqual([]);
});

test('the check sees a crossing when there is one', () => {
  // services.ts is the one file allowed to cross: the same scan finds its imports of src/store/.
  const wired = relativeImports(path.join(SRC, 'services.ts')).filter((t) => t.startsWith(STORE));
  expect(wired.length).toBeGreaterThan(0);
});

test('tasks reach providers only through the Provider interface', () => {
  // The task service and worker know `Provider` (src/providers/index.ts); no branch names the sandbox or the relay.
  const TASKS = path.join(SRC, 'tasks');
  const PROVIDERS = path.join(SRC, 'providers');
  const reaching: string[] = [];
  for (const file of sources(TASKS)) {
    for (const target of relativeImports(file)) {
      if (target.startsWith(PROVIDERS + path.sep))
        reaching.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`);
    }
    if (/provider === '(sandbox|relay)'/.test(readFileSync(file, 'utf8')))
      reaching.push(`${path.relative(SRC, file)} branches on a provider`);
  }
  expect(reaching).toEqual([]);
});
