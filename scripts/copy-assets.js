// Copies the runtime assets under src/ (Lua scripts, SQL migrations, placeholder media) to the same places under
// another directory: scripts/build-bench.js into build-bench/src. (scripts/build.js copies them into each build.)
// node scripts/copy-assets.js <out>
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const src = path.join(root, 'src');
const exts = new Set(['.lua', '.sql', '.png', '.jpg', '.mp4', '.mp3', '.wav']);

function copyAssets(out, dir = src) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(out, from);
    else if (exts.has(path.extname(entry.name))) {
      const to = path.join(out, path.relative(src, from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}

module.exports = { copyAssets, ASSET_EXTS: exts };

if (require.main === module) {
  if (!process.argv[2]) throw new Error('usage: node scripts/copy-assets.js <out>');
  copyAssets(path.resolve(process.argv[2]));
}
