/**
 * `npm run test:clients`: the coding CLIs against Genway (test/clients), apart from `npm test` because the CLIs
 * weigh about 900 MB (installed into .clients/ by scripts/install-clients.js).
 * @type {import('jest').Config}
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/clients'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 180000,
  maxWorkers: 1,
};
