// Copies non-TypeScript runtime assets (Lua scripts, SQL migrations, placeholder media) from src/ into dist/.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const exts = new Set(['.lua', '.sql', '.png', '.jpg', '.mp4', '.mp3', '.wav']);

function copy(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) copy(from);
    else if (exts.has(path.extname(entry.name))) {
      const to = path.join(root, 'dist', path.relative(path.join(root, 'src'), from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
    }
  }
}
copy(path.join(root, 'src'));
