/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The coding CLIs run apart: npm run test:clients (jest.clients.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/clients/'],
  // Types are checked by `npm run typecheck` before jest runs; jest only strips them (esbuild).
  transform: { '^.+\\.tsx?$': '<rootDir>/test/helpers/esbuild-transform.js' },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  setupFiles: ['<rootDir>/test/helpers/env.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
