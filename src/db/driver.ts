import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 build this Node.js can run (docs/operations.md, "Node.js versions").
 * better-sqlite3 12 wraps its objects with node::ObjectWrap, which aborts the process on
 * Node 24.19 and later when a statement is freed ("Assertion failed: (env) != nullptr" in
 * RemoveEnvironmentCleanupHook). better-sqlite3 13 is built on Node-API 10, which Node 20 does
 * not have (it crashes there). package.json installs 12 as `better-sqlite3` and 13 as the
 * optional `better-sqlite3-napi`, which npm skips on Node 20 (engine-strict in .npmrc); a
 * Node.js with Node-API 10 or later (22.14+, 24) loads 13.
 */
const require = createRequire(import.meta.url);

function resolveDriver(): string {
  if (Number(process.versions.napi) >= 10) {
    try {
      return require.resolve('better-sqlite3-napi');
    } catch {
      // Not installed (an install from before it was added): better-sqlite3 12.
    }
  }
  return require.resolve('better-sqlite3');
}

/** The resolved module path, for threads that load the driver themselves. */
export const driverPath = resolveDriver();

/** better-sqlite3's Database class. */
export const SqliteDatabase = require(driverPath) as typeof BetterSqlite3;
