import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // type-graphql and our code must share one copy of graphql ("another module or realm").
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    // An internal error a service logs fails the test that did not declare it (test/support/internalErrors.ts).
    setupFiles: ['test/support/setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Two files at a time, each with up to three service processes on one PostgreSQL server:
    // small pools keep the suite far below its connection limit (spawned services inherit this).
    env: { DATABASE_POOL_MAX: '6' },
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
