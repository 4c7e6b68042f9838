// Renders README.md's translation matrix from the matrix's case list (test/helpers/translation-matrix/cases.ts):
// `node scripts/translation-matrix.js` rewrites the part between its two marks; `--check` exits 1 when it is out of
// date. test/e2e/translation-matrix.test.ts runs the same check.
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');
const prettier = require('prettier');

const root = path.join(__dirname, '..');
const readme = path.join(root, 'README.md');
const START =
  '<!-- translation-matrix: rendered from test/helpers/translation-matrix/cases.ts by scripts/translation-matrix.js -->';
const END = '<!-- translation-matrix: end -->';

function load() {
  const bundle = esbuild.buildSync({
    entryPoints: [path.join(root, 'test/helpers/translation-matrix/cases.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    write: false,
    logLevel: 'error',
  });
  const loaded = { exports: {} };
  new Function('module', 'exports', 'require', bundle.outputFiles[0].text)(loaded, loaded.exports, require);
  return loaded.exports;
}

/** The README as it should be: the matrix rendered between the marks, the file formatted as prettier would. */
async function expected(current) {
  const from = current.indexOf(START);
  const to = current.indexOf(END);
  if (from === -1 || to < from) throw new Error(`README.md lacks the lines ${START} and ${END}`);
  const { renderMatrix } = load();
  const next = `${current.slice(0, from + START.length)}\n\n${renderMatrix()}\n\n${current.slice(to)}`;
  const options = (await prettier.resolveConfig(readme)) ?? {};
  return prettier.format(next, { ...options, parser: 'markdown' });
}

async function main() {
  const current = fs.readFileSync(readme, 'utf8');
  const next = await expected(current);
  if (process.argv.includes('--check')) {
    if (next !== current) {
      console.error('README.md’s translation matrix is out of date: run node scripts/translation-matrix.js');
      process.exit(1);
    }
  } else if (next !== current) {
    fs.writeFileSync(readme, next);
    console.log('README.md rewritten');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
