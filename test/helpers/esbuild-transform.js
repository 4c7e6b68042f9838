/**
 * Jest's TypeScript transform: esbuild strips the types of one file at a time (CommonJS, with a source map), in
 * milliseconds where ts-jest type-checked each test file again. Types are checked once per run by
 * `npm run typecheck` (scripts/typecheck.js), which `npm test` runs before jest.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const esbuild = require('esbuild');

const OWN = crypto
  .createHash('sha256')
  .update(fs.readFileSync(__filename))
  .update(esbuild.version)
  .digest('hex');

module.exports = {
  process(source, filename) {
    const { code, map } = esbuild.transformSync(source, {
      loader: filename.endsWith('x') ? 'tsx' : 'ts',
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: filename,
      sourcesContent: false,
      keepNames: true,
    });
    return { code, map };
  },
  getCacheKey(source, filename) {
    return crypto.createHash('sha256').update(OWN).update(filename).update('\0').update(source).digest('hex');
  },
};
