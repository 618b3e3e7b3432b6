import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: the fault-injection suites (test/faults: the database cut, hung or
 * full, start-up and shutdown without it, slow receivers and dead names, slow and hostile
 * clients), kept out of the regular `npm test`. Several assert the recovery and latency bounds
 * the service promises (a write within 2 s of the database's return, a webhook within 1 s of its
 * event), so they run one file at a time, on a machine not shared with the other suites. They
 * run on SQLite, and again on PostgreSQL when TEST_DATABASE_URL is set.
 */
const engines = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (!process.env.TEST_DATABASE_URL) {
  console.warn('TEST_DATABASE_URL is not set: fault-injection suites run on SQLite only.');
}

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    projects: engines.map((engine) => ({
      extends: true as const,
      test: {
        name: `faults-${engine}`,
        include: ['test/faults/**/*.test.ts'],
        env: { TEST_ENGINE: engine },
      },
    })),
  },
});
