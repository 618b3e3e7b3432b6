import os from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Unit tests run once. Every suite that touches a database runs on SQLite, and again on
 * PostgreSQL when TEST_DATABASE_URL points at a server (CI always sets it).
 */
const databaseSuites = ['test/**/*.test.ts'];
/** npm run test:reliability and test:faults run these (vitest.reliability.config.ts, vitest.faults.config.ts). */
const reliabilitySuites = 'test/reliability/**';
const faultSuites = 'test/faults/**';
/**
 * Suites whose subject does not depend on the engine: the OpenAPI document and the SDKs against
 * a running service (the same answers on both). They run on SQLite only.
 */
const engineAgnosticSuites = ['test/openapi/**', 'test/sdk/**'];
const engines = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
if (!process.env.TEST_DATABASE_URL) {
  console.warn('TEST_DATABASE_URL is not set: database suites run on SQLite only.');
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default (one less than the cores) runs one file at a time on a 2-core machine;
    // most suites wait on child processes, fsync and sockets, so two at a time finish sooner.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // A worker runs file after file with its module cache: the suites share no module state (every
    // one opens its own database, service and ports), and importing the service again for each of
    // some two hundred files was a seventh of the run. Vitest still keeps projects (engines) apart.
    isolate: false,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      ...engines.map((engine) => ({
        extends: true as const,
        test: {
          name: engine,
          include: databaseSuites,
          exclude: ['test/unit/**', reliabilitySuites, faultSuites, ...(engine === 'sqlite' ? [] : engineAgnosticSuites)],
          env: { TEST_ENGINE: engine },
        },
      })),
    ],
  },
});
