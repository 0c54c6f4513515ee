/** Jest runs the whole suite against one real Temporal dev server that global-setup starts. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } }],
  },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 90_000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
