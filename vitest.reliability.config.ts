import { defineConfig } from 'vitest/config';

/**
 * `npm run test:reliability`: the reliability and security suites (test/reliability), kept out
 * of the regular `npm test`. They run on SQLite, and again on PostgreSQL when TEST_DATABASE_URL
 * is set (same pattern as vitest.config.ts). RELIABILITY_RUNS / RELIABILITY_SEED: see
 * test/reliability/support/settings.ts.
 */
const engines = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (!process.env.TEST_DATABASE_URL) {
  console.warn('TEST_DATABASE_URL is not set: reliability suites run on SQLite only.');
}

// Long mode (RELIABILITY_RUNS=100000) needs more than the default ten minutes per test.
const runs = Number(process.env.RELIABILITY_RUNS ?? 2000) || 2000;

export default defineConfig({
  test: {
    testTimeout: Math.max(600_000, runs * 40),
    hookTimeout: 120_000,
    // Two suite files at a time: every limit in these suites is a count or a generous timeout,
    // and one at a time kept CI's two cores half idle while suites waited on child processes.
    maxWorkers: 2,
    // As in vitest.config.ts: a worker keeps its module cache from file to file.
    isolate: false,
    projects: engines.map((engine) => ({
      extends: true as const,
      test: {
        name: `reliability-${engine}`,
        include: ['test/reliability/**/*.test.ts'],
        env: { TEST_ENGINE: engine },
      },
    })),
  },
});
