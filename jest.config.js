/** Jest runs the whole suite against one real Temporal dev server that global-setup starts. */
module.exports = {
  testEnvironment: 'node',
  // The library's suites, and the example package's own.
  roots: ['<rootDir>/test', '<rootDir>/examples/invoice-approval/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } }],
    // jose ships ES modules only, which jest's CommonJS runtime cannot load as they are.
    '/node_modules/jose/.+\\.js$': ['ts-jest', { tsconfig: { module: 'commonjs', allowJs: true, isolatedModules: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // The example imports the package by name; in the checkout that is its sources.
  moduleNameMapper: { '^temporal-mcp-tasks$': '<rootDir>/src/index.ts', '^temporal-mcp-tasks/workflow$': '<rootDir>/src/workflow.ts' },
  setupFiles: ['<rootDir>/test/helpers/file-setup.ts'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  testTimeout: 90_000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
};
