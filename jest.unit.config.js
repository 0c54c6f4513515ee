/** The fast tier (npm run test:unit): the pure parts of the task core, and the lint rule against import cycles, without Temporal. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/unit'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } }],
  },
  // The example imports the package by name; in the checkout that is its sources.
  moduleNameMapper: { '^temporal-mcp-tasks$': '<rootDir>/src/index.ts', '^temporal-mcp-tasks/workflow$': '<rootDir>/src/workflow.ts' },
  setupFiles: ['<rootDir>/test/helpers/file-setup.ts'],
  testTimeout: 10_000,
};
