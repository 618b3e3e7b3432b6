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
    // The machine has two cores: one suite file at a time per engine keeps timings honest.
    fileParallelism: false,
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
