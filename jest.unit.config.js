/** The fast tier (npm run test:unit): the pure parts of the task core, and the lint rule against import cycles, without Temporal. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/unit'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { module: 'commonjs', moduleResolution: 'node10', isolatedModules: true } }],
  },
  setupFiles: ['<rootDir>/test/helpers/log-level.ts'],
  testTimeout: 10_000,
};
