import fs from 'node:fs';
import path from 'node:path';

/**
 * Where Genway's own files are at run time. From source (tests) each asset sits beside its module under src/. From a
 * build (scripts/build.js) the code is a bundle, dist/builds/<id>/main.js, and the assets were copied into that
 * build at their places under src/; esbuild defines GENWAY_BUILD_ROOT, the way from the bundle up to its build.
 */
declare const GENWAY_BUILD_ROOT: string | undefined;

const built = typeof GENWAY_BUILD_ROOT === 'string';

/** src/, or the build that stands in for it. */
export const SOURCE_ROOT = built ? path.join(__dirname, GENWAY_BUILD_ROOT as string) : __dirname;

/** The checkout (or the image's /app): the first directory above SOURCE_ROOT holding config/default.yaml. */
export const PACKAGE_ROOT = findUp(SOURCE_ROOT);

function findUp(from: string): string {
  for (let dir = path.dirname(from); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'config', 'default.yaml'))) return dir;
    if (path.dirname(dir) === dir) return path.join(__dirname, '..');
  }
}

/** A runtime asset by its path under src/, e.g. assetPath('store', 'redis', 'lua'). */
export function assetPath(...segments: string[]): string {
  return path.join(SOURCE_ROOT, ...segments);
}

/** The built console: the build's own, or from source the current build's (dist/console links to it). */
export const CONSOLE_DIR = built
  ? path.join(SOURCE_ROOT, 'console')
  : path.join(PACKAGE_ROOT, 'dist', 'console');

/**
 * Marks this process's build in use (dist/builds/<id>/.in-use/<pid>) until it exits, so a later build does not
 * prune the console and media it serves from. Best effort: a read-only install has nothing to prune either.
 */
export function markBuildInUse(): void {
  if (!built) return;
  const mark = path.join(SOURCE_ROOT, '.in-use', String(process.pid));
  try {
    fs.mkdirSync(path.dirname(mark), { recursive: true });
    fs.writeFileSync(mark, '');
    process.once('exit', () => fs.rmSync(mark, { force: true }));
  } catch {
    // read-only (the image): fine
  }
}
