// Renders docs/translation.md's mapping table from the translation layer's own tables (src/gateway/translate):
// `node scripts/translation-table.js` rewrites the generated half; `--check` exits 1 when the file is out of date.
// test/unit/translate-table.test.ts runs the same check.
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');
const prettier = require('prettier');

const root = path.join(__dirname, '..');
const doc = path.join(root, 'docs', 'translation.md');

/** The document as it should be: its hand-written half, then the tables rendered by `render`, formatted. */
async function expected(current, render, mark) {
  const at = current.indexOf(mark);
  if (at === -1) throw new Error(`docs/translation.md lacks the line: ${mark}`);
  const options = (await prettier.resolveConfig(doc)) ?? {};
  return prettier.format(current.slice(0, at) + render(), { ...options, parser: 'markdown' });
}

function load() {
  const bundle = esbuild.buildSync({
    entryPoints: [path.join(root, 'src/gateway/translate/doc.ts')],
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

async function main() {
  const { renderGenerated, GENERATED_MARK } = load();
  const current = fs.readFileSync(doc, 'utf8');
  const next = await expected(current, renderGenerated, GENERATED_MARK);
  if (process.argv.includes('--check')) {
    if (next !== current) {
      console.error('docs/translation.md is out of date: run node scripts/translation-table.js');
      process.exit(1);
    }
  } else if (next !== current) {
    fs.writeFileSync(doc, next);
    console.log('docs/translation.md rewritten');
  }
}

module.exports = { expected };
if (require.main === module) main();
