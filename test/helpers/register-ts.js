/**
 * Lets a plain Node script under test/ (a fixture a test spawns) require src/ TypeScript as it is, types stripped by
 * the same esbuild transform jest uses (test/helpers/esbuild-transform.js): dist/ holds one bundle per entry point,
 * not modules a fixture could pick.
 */
const fs = require('node:fs');
const { process: strip } = require('./esbuild-transform');

require.extensions['.ts'] = (module, filename) => {
  module._compile(strip(fs.readFileSync(filename, 'utf8'), filename).code, filename);
};
