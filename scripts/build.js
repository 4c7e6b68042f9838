#!/usr/bin/env node
/**
 * `npm run build` (and the first step of `npm start` and `npm test`): the server and the console into dist/, in
 * seconds, and not at all when nothing changed.
 *
 * A build is named by a hash of its inputs (INPUTS below) and lives in dist/builds/<id>/: the server bundled by
 * esbuild (main.js, mcp/main.js, with source maps), the runtime assets copied to their places under src/ (Lua, SQL
 * migrations, placeholder media: scripts/copy-assets.js) and the console (scripts/build-console.js). It is built in a directory of its own
 * and renamed into place whole, so a build that exists is complete. dist/main.js and dist/mcp/main.js are two-line
 * stubs that require the current build, and dist/console links to its console; each is replaced by a rename, so a
 * process starting meanwhile sees the old build or the new one, never half of either. A running process keeps
 * using the build it started from; builds are pruned only when they are not among the KEEP newest and no live
 * process has marked them in use (src/paths.ts). Two builds at once of the same tree both succeed: the second
 * rename finds the build there and uses it.
 *
 * No type-checking here: `npm run typecheck` (part of `npm test`, `npm run lint` and CI) does that.
 *
 * node scripts/build.js [--quiet]
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const BUILDS = path.join(DIST, 'builds');
/** What a build is made from: a change to any of these is a new build. */
const INPUTS = [
  'src',
  'console/src',
  'package-lock.json',
  'tsconfig.json',
  'scripts/build.js',
  'scripts/build-console.js',
  'scripts/copy-assets.js',
];
/** Entry points, as dist/<name>.js: what package.json's bin, the Dockerfile, the tests and the benches run. */
const ENTRIES = { main: 'src/main.ts', 'mcp/main': 'src/mcp/main.ts' };
/** Builds kept besides any a live process uses. */
const KEEP = 3;

const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');
const say = (line) => quiet || process.stderr.write(`build: ${line}\n`);

function files(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) files(file, out);
    else if (entry.isFile()) out.push(file);
  }
  return out;
}

/** The build's name: a hash of every input file's path and bytes. About 20 ms for the whole tree. */
function buildId() {
  const hash = crypto.createHash('sha256');
  for (const input of INPUTS) {
    const at = path.join(ROOT, input);
    const list = fs.statSync(at).isDirectory() ? files(at).sort() : [at];
    for (const file of list) {
      hash.update(path.relative(ROOT, file).split(path.sep).join('/'));
      hash.update('\0');
      hash.update(fs.readFileSync(file));
      hash.update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Writes `file` by a rename over it: readers see the old content or the new, whole. */
function replaceFile(file, content, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content, { mode });
  fs.renameSync(tmp, file);
}

function replaceSymlink(link, target) {
  const tmp = `${link}.${process.pid}.tmp`;
  fs.rmSync(tmp, { force: true });
  fs.symlinkSync(target, tmp);
  try {
    fs.renameSync(tmp, link);
  } catch (err) {
    // dist/console of an older layout (a real directory): rename cannot replace it, so it goes first.
    if (err.code !== 'EISDIR' && err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    fs.rmSync(link, { recursive: true, force: true });
    fs.renameSync(tmp, link);
  }
}

function stub(id, entry) {
  const up = entry.includes('/') ? '../' : './';
  return `#!/usr/bin/env node\n// Written by scripts/build.js: runs build ${id}.\nrequire('${up}builds/${id}/${entry}.js');\n`;
}

function linked(id) {
  return Object.keys(ENTRIES).every((entry) => {
    try {
      return fs.readFileSync(path.join(DIST, `${entry}.js`), 'utf8') === stub(id, entry);
    } catch {
      return false;
    }
  });
}

/**
 * dist/ as tsc laid it out before this script (a file per module, cli.js among them) is removed once, so no
 * bench or tool loads a stale module from it.
 */
function removeOldLayout() {
  if (!fs.existsSync(path.join(DIST, 'cli.js'))) return;
  const ours = new Set(['builds', 'main.js', 'mcp', 'console']);
  for (const name of fs.readdirSync(DIST))
    if (!ours.has(name)) fs.rmSync(path.join(DIST, name), { recursive: true, force: true });
  for (const name of fs.readdirSync(path.join(DIST, 'mcp')))
    if (name !== 'main.js') fs.rmSync(path.join(DIST, 'mcp', name), { recursive: true, force: true });
}

/** Points dist/ at build `id`, and marks it the newest. */
function link(id) {
  for (const entry of Object.keys(ENTRIES))
    replaceFile(path.join(DIST, `${entry}.js`), stub(id, entry), 0o755);
  replaceSymlink(path.join(DIST, 'console'), path.join('builds', id, 'console'));
  removeOldLayout();
  const now = new Date();
  fs.utimesSync(path.join(BUILDS, id), now, now);
}

async function build(id) {
  const esbuild = require('esbuild');
  const { buildConsole } = require('./build-console');
  fs.mkdirSync(BUILDS, { recursive: true });
  const tmp = path.join(BUILDS, `.tmp-${id}-${process.pid}`);
  fs.rmSync(tmp, { recursive: true, force: true });
  const server = Object.entries(ENTRIES).map(([name, entry]) =>
    esbuild.build({
      entryPoints: [path.join(ROOT, entry)],
      outfile: path.join(tmp, `${name}.js`),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      // node_modules stay require()d from node_modules: the image prunes dev dependencies, not these.
      packages: 'external',
      sourcemap: true,
      // No keepNames: it wraps every function and class as it is made in a `__name()` call, closures made per
      // request included, which cost a gateway call 20 % of its CPU (bench:gateway:ab, 54 against 44 µs).
      // src/paths.ts: from this bundle up to the build's root, where the assets are.
      define: { GENWAY_BUILD_ROOT: JSON.stringify(name.includes('/') ? '..' : '.') },
      logLevel: 'warning',
    }),
  );
  const consoleBuild = buildConsole(path.join(tmp, 'console'), { quiet });
  require('./copy-assets').copyAssets(tmp);
  await Promise.all([...server, consoleBuild]);
  fs.writeFileSync(
    path.join(tmp, 'build.json'),
    JSON.stringify({ id, builtAt: new Date().toISOString(), entries: ENTRIES }, null, 2) + '\n',
  );
  try {
    fs.renameSync(tmp, path.join(BUILDS, id));
  } catch (err) {
    // Another build of the same tree got there first: its build is this one.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(BUILDS, id, 'build.json'))) throw err;
  }
}

/** Removes builds past the KEEP newest that no live process marked in use (dist/builds/<id>/.in-use/<pid>). */
function prune(current) {
  let entries;
  try {
    entries = fs.readdirSync(BUILDS);
  } catch {
    return;
  }
  for (const name of entries.filter((n) => n.startsWith('.tmp-'))) {
    const pid = Number(name.split('-').pop());
    if (!alive(pid)) fs.rmSync(path.join(BUILDS, name), { recursive: true, force: true });
  }
  const builds = entries
    .filter((n) => !n.startsWith('.'))
    .map((name) => ({ name, mtime: fs.statSync(path.join(BUILDS, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { name } of builds.slice(KEEP)) {
    if (name === current) continue;
    const marks = path.join(BUILDS, name, '.in-use');
    let pids = [];
    try {
      pids = fs.readdirSync(marks).map(Number);
    } catch {
      // no marks: nobody ran it, or every user has exited
    }
    if (pids.some(alive)) continue;
    fs.rmSync(path.join(BUILDS, name), { recursive: true, force: true });
  }
}

async function main() {
  const started = process.hrtime.bigint();
  const ms = () => `${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`;
  const id = buildId();
  const exists = fs.existsSync(path.join(BUILDS, id, 'build.json'));
  if (exists) {
    if (!linked(id)) link(id);
    say(`${id} is current, nothing to build (${ms()})`);
  } else {
    await build(id);
    link(id);
    say(`${id} built into dist/builds/${id} (${ms()})`);
  }
  prune(id);
}

main().catch((err) => {
  process.stderr.write(`build: ${err.stack || err.message}\n`);
  process.exit(1);
});
