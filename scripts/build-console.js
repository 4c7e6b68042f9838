// Builds the web console (console/src) into dist/console: one hashed script, one hashed stylesheet and an
// index.html that loads them (no inline script or style, so the console runs under a strict CSP). Everything is
// bundled from npm packages at build time: nothing is fetched at run time. Fails when the first load (index.html,
// script and stylesheet, gzipped) exceeds the budget.
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const esbuild = require('esbuild');

const root = path.join(__dirname, '..');
const source = path.join(root, 'console', 'src');
const BUDGET_GZIP_BYTES = 200 * 1024;

/** Builds the console into `out` (scripts/build.js: dist/builds/<id>/console). */
async function buildConsole(out, { quiet = false } = {}) {
  fs.rmSync(out, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { app: path.join(source, 'main.tsx'), style: path.join(source, 'styles.css') },
    outdir: path.join(out, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    absWorkingDir: root,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) =>
    path.relative(out, path.join(root, file)),
  );
  const script = outputs.find((f) => /app-.*\.js$/.test(f));
  const style = outputs.find((f) => /style-.*\.css$/.test(f));
  if (!script || !style) throw new Error(`console build: missing outputs in ${outputs.join(', ')}`);
  for (const stray of outputs.filter((f) => f !== script && f !== style)) fs.rmSync(path.join(out, stray));
  const html = fs
    .readFileSync(path.join(source, 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/console/${script}`)
    .replace('%STYLE%', `/console/${style}`);
  fs.writeFileSync(path.join(out, 'index.html'), html);
  fs.copyFileSync(path.join(source, 'favicon.svg'), path.join(out, 'assets', 'favicon.svg'));

  const gz = (file) => zlib.gzipSync(fs.readFileSync(path.join(out, file)), { level: 9 }).length;
  const sizes = { 'index.html': gz('index.html'), [script]: gz(script), [style]: gz(style) };
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  fs.writeFileSync(
    path.join(out, 'build.json'),
    JSON.stringify({ script, style, gzipBytes: sizes, total }, null, 2),
  );
  if (!quiet)
    console.error(
      `console: first load ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_GZIP_BYTES / 1024} KB)`,
    );
  if (total > BUDGET_GZIP_BYTES)
    throw new Error(`console: first load ${total} bytes gzipped is over the budget`);
}

module.exports = { buildConsole };

// node scripts/build-console.js --out <dir>: the console alone.
if (require.main === module) {
  const outFlag = process.argv.indexOf('--out');
  const out = outFlag > 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(root, 'dist', 'console');
  buildConsole(out).catch((err) => {
    console.error(err.message);
    process.exit(1);
  });
}
