import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { SqliteDatabase } from '../../src/db/driver.js';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { BackgroundCheckpointer } from '../../src/db/checkpointer.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { testEngine } from '../support/database.js';

/**
 * `serve` copies SQLite's WAL into the database file on a thread of its own
 * (db/checkpointer.ts). Seen from outside: committed rows reach the database file itself
 * without any checkpoint by the writing connection.
 */
let dataDir: string;
let db: Db | undefined;

beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-checkpoints-'));
});

afterEach(async () => {
  await db?.close();
  db = undefined;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * The accounts in the database file alone, as if its WAL were lost (-1 when the copy caught a
 * checkpoint half-way and is not readable yet).
 */
function accountsInMainFile(): number {
  const copy = path.join(dataDir, 'main-file-only.sqlite');
  fs.copyFileSync(path.join(dataDir, SQLITE_FILE_NAME), copy);
  let reader: BetterSqlite3.Database | undefined;
  try {
    reader = new SqliteDatabase(copy);
    // Not even the schema has reached the file yet: no accounts either.
    if (!reader.prepare("select 1 from sqlite_master where name = 'accounts'").get()) return 0;
    return Number(reader.prepare('select count(*) as n from accounts').pluck().get());
  } catch {
    return -1;
  } finally {
    reader?.close();
    for (const file of [copy, `${copy}-wal`, `${copy}-shm`]) fs.rmSync(file, { force: true });
  }
}

let written = 0;
async function writeAccounts(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await createAccount(db!, `checkpoint-${++written}@example.com`);
}

/** Polls (no fixed sleep) until `condition` holds or the deadline passes. */
async function eventually(condition: () => boolean, deadlineMs = 10_000): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}

test.skipIf(testEngine !== 'sqlite')('without the thread, a few commits stay in the WAL (the writer checkpoints every 1,000 pages)', async () => {
  db = await openDatabase({ dataDir });
  await writeAccounts(5);
  expect(accountsInMainFile()).toBe(0);
});

test.skipIf(testEngine !== 'sqlite')('with it, committed rows reach the database file while the writer only appends to the WAL', async () => {
  db = await openDatabase({ dataDir, backgroundCheckpoints: true });
  await writeAccounts(5);
  expect(await eventually(() => accountsInMainFile() === 5)).toBe(true);
  // And again after more commits: the thread keeps going.
  await writeAccounts(3);
  expect(await eventually(() => accountsInMainFile() === 8)).toBe(true);
});

test.skipIf(testEngine !== 'sqlite')('the thread also runs in a process started as `node --input-type=module -e …`', async () => {
  // The built modules (npm test builds them first), in a process whose command line would make
  // an inherited eval read the thread's CommonJS program as a module.
  const root = path.resolve(import.meta.dirname, '../..');
  const program = `
    const { openDatabase } = await import(${JSON.stringify(path.join(root, 'dist/db/open.js'))});
    const { createAccount } = await import(${JSON.stringify(path.join(root, 'dist/accounts/accounts.js'))});
    const db = await openDatabase({ dataDir: ${JSON.stringify(dataDir)}, backgroundCheckpoints: true });
    for (let i = 0; i < 5; i++) await createAccount(db, 'module-' + i + '@example.com');
    process.stdout.write('written');
    process.stdin.on('end', () => db.close());
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('written') && resolve());
      child.once('exit', (code) => reject(new Error(`the process exited (${code}) before writing`)));
    });
    // Five accounts are far below the writer's own threshold: only the thread can copy them.
    expect(await eventually(() => accountsInMainFile() === 5)).toBe(true);
  } finally {
    child.stdin.end();
    await exited;
  }
});

test.skipIf(testEngine !== 'sqlite')('a thread that dies is started again, the writer checkpointing at the default meanwhile', async () => {
  db = await openDatabase({ dataDir });
  const writerPages: number[] = [];
  const checkpointer = new BackgroundCheckpointer(path.join(dataDir, SQLITE_FILE_NAME), (pages) => writerPages.push(pages));
  try {
    await writeAccounts(2);
    expect(await eventually(() => accountsInMainFile() === 2)).toBe(true);
    // The thread ends as a crash would end it (its own connection gone with it).
    await (checkpointer as unknown as { worker: Worker }).worker.terminate();
    expect(await eventually(() => writerPages.at(-1) === 1_000)).toBe(true);
    await writeAccounts(3);
    // Started again: it copies the new rows, and the writer's threshold goes back up.
    expect(await eventually(() => accountsInMainFile() === 5)).toBe(true);
    expect(await eventually(() => writerPages.at(-1) === 10_000)).toBe(true);
    expect(writerPages).toEqual([10_000, 1_000, 10_000]);
  } finally {
    await checkpointer.close();
  }
});
