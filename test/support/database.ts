import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kysely } from 'kysely';
import { afterAll, beforeAll, expect } from 'vitest';
import pg from 'pg';
import type { Engine } from '../../src/db/engine.js';

/**
 * Which engine this test run exercises (the vitest project sets TEST_ENGINE), and a fresh,
 * empty database for it: a temporary DATA_DIR on SQLite, a new database on the PostgreSQL
 * server of TEST_DATABASE_URL.
 */
export const testEngine: 'sqlite' | 'postgres' = process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export interface FreshDatabase {
  /** Environment for loadConfig() and for child processes: DATA_DIR, plus DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  dataDir: string;
  dispose(): Promise<void>;
}

const TEST_POOL_SIZE = 4;

export async function freshDatabase(): Promise<FreshDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-test-'));
  const removeDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (testEngine === 'sqlite') {
    return { env: { DATA_DIR: dataDir }, dataDir, dispose: async () => removeDir() };
  }
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error('TEST_ENGINE=postgres needs TEST_DATABASE_URL');
  const name = `starport_test_${testFileTag()}_${Math.random().toString(36).slice(2, 10)}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    // Pools of 4, not the default 10: the suite runs its files side by side against one server
    // (max_connections 100 by default), and each process may open two pools (statements outside
    // transactions have their own). With 10, a scale-out test's six processes and a neighbour's
    // workers exhausted the server ("too many clients already").
    env: { DATA_DIR: dataDir, DATABASE_URL: url.toString(), DATABASE_POOL_SIZE: String(TEST_POOL_SIZE) },
    dataDir,
    async dispose() {
      removeDir();
      await withAdmin(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/**
 * The test file's name in a database name (within PostgreSQL's 63 characters), so that a
 * database some test failed to drop says which file made it.
 */
function testFileTag(): string {
  const file = expect.getState().testPath;
  const tag = file
    ? path
        .basename(file)
        .replace(/\.test\.ts$/, '')
        .replace(/[^a-z0-9]+/gi, '_')
        .toLowerCase()
    : String(process.pid);
  return tag.slice(0, 40);
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database opened without migrating it, with its engine: migration tests bring it to
 * the version before the one they test, write rows the old way, then migrate the rest.
 */
export async function unmigratedDatabase(): Promise<{ db: Kysely<any>; engine: Engine; dispose(): Promise<void> }> {
  const database = await freshDatabase();
  const url = database.env.DATABASE_URL;
  let db: Kysely<any>;
  let engine: Engine;
  if (url) {
    const { postgresDialect, postgresEngine, postgresPool } = await import('../../src/db/postgres.js');
    db = new Kysely({ dialect: postgresDialect(postgresPool(url, 2)) });
    engine = postgresEngine;
  } else {
    const { openSqlite, sqliteDialect, sqliteEngine } = await import('../../src/db/sqlite.js');
    db = new Kysely({ dialect: sqliteDialect(openSqlite(database.dataDir)) });
    engine = sqliteEngine;
  }
  return {
    db,
    engine,
    async dispose() {
      await db.destroy();
      await database.dispose();
    },
  };
}

/**
 * For a migration test file: a fresh unmigrated database opened before its tests (handed to
 * `onOpen`) and disposed of after them.
 */
export function useUnmigratedDatabase(onOpen: (opened: { db: Kysely<any>; engine: Engine }) => void): void {
  let database: Awaited<ReturnType<typeof unmigratedDatabase>> | undefined;
  beforeAll(async () => {
    database = await unmigratedDatabase();
    onOpen(database);
  });
  afterAll(async () => {
    await database?.dispose();
  });
}
