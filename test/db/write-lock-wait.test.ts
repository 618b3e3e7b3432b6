import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { testEngine } from '../support/database.js';

/**
 * On SQLite a transaction waiting for another connection's write lock waits without blocking
 * the event loop (sqlite.ts, ImmediateTransactionSqliteDriver), so even a holder on the same
 * thread, which needs the event loop to reach its commit, finishes first.
 */
const opened: Db[] = [];
let dataDir: string | undefined;

afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test.skipIf(testEngine !== 'sqlite')('a transaction waits for the write lock of another connection of this thread, and both commit', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-lock-'));
  const first = await openDatabase({ dataDir });
  const second = await openDatabase({ dataDir });
  opened.push(first, second);
  const order: string[] = [];
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));

  // The first connection takes the write lock and keeps it until a timer (the event loop) runs.
  const holder = first.kysely.transaction().execute(async (tx) => {
    await tx.insertInto('accounts').values({ id: 'acct_holder', email: 'holder@example.com', status: 'active', created_at: 1 }).execute();
    holding();
    await released;
    order.push('holder commits');
  });
  await held;
  const waiter = second.kysely.transaction().execute(async (tx) => {
    order.push('waiter begins');
    await tx.insertInto('accounts').values({ id: 'acct_waiter', email: 'waiter@example.com', status: 'active', created_at: 2 }).execute();
  });
  // Runs only if the waiting transaction leaves the event loop free.
  setTimeout(() => {
    order.push('timer');
    release();
  }, 5);
  await Promise.all([holder, waiter]);
  expect(order).toEqual(['timer', 'holder commits', 'waiter begins']);
  const ids = await second.kysely.selectFrom('accounts').select('id').orderBy('id').execute();
  expect(ids.map((row) => row.id)).toEqual(['acct_holder', 'acct_waiter']);
});
