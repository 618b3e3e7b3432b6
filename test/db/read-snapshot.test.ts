import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { authenticate, createAccount, reissueKey } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { openSqlite } from '../../src/db/sqlite.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * SQLite reads outside a transaction share one read transaction per event-loop turn
 * (ReadSnapshot in src/db/sqlite.ts). What that must and must not change.
 */
let fresh: FreshDatabase;
let db: Db;
let other: BetterSqlite3.Database;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir });
  other = openSqlite(fresh.dataDir);
});

afterEach(async () => {
  other.close();
  await db.close();
  await fresh.dispose();
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const emailOf = async (id: string) => (await db.kysely.selectFrom('accounts').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;

test.skipIf(testEngine !== 'sqlite')('this connection reads its own writes at once, inside the same turn', async () => {
  const { accountId } = await createAccount(db, 'before@example.com');
  expect(await emailOf(accountId)).toBe('before@example.com');
  await db.kysely.updateTable('accounts').set({ email: 'after@example.com' }).where('id', '=', accountId).execute();
  expect(await emailOf(accountId)).toBe('after@example.com');
  await db.writeTransaction((tx) => tx.updateTable('accounts').set({ email: 'grouped@example.com' }).where('id', '=', accountId).execute());
  expect(await emailOf(accountId)).toBe('grouped@example.com');
});

test.skipIf(testEngine !== 'sqlite')("another process's commit is seen from the next turn on, and the key cache follows it", async () => {
  const { accountId, testKey } = await createAccount(db, 'before@example.com');
  expect(await authenticate(db, testKey)).toMatchObject({ ok: true, accountId });
  expect(await emailOf(accountId)).toBe('before@example.com');
  other.prepare("update accounts set email = 'after@example.com' where id = ?").run(accountId);
  other.prepare('update api_keys set revoked_at = ? where account_id = ?').run(Date.now(), accountId);
  // The same turn still reads the snapshot it began with.
  expect(await emailOf(accountId)).toBe('before@example.com');
  await nextTurn();
  expect(await emailOf(accountId)).toBe('after@example.com');
  expect(await authenticate(db, testKey)).toEqual({ ok: false, code: 'api_key_revoked' });
});

test.skipIf(testEngine !== 'sqlite')("this connection's own key change is seen by the key cache within the same turn", async () => {
  const { accountId, testKey } = await createAccount(db, 'a@example.com');
  expect(await authenticate(db, testKey)).toMatchObject({ ok: true, accountId });
  // The cache's stamp is read once per snapshot; a reissue on this connection must still count.
  const newKey = await reissueKey(db, accountId, 'test');
  expect(await authenticate(db, testKey)).toEqual({ ok: false, code: 'api_key_revoked' });
  expect(await authenticate(db, newKey)).toMatchObject({ ok: true, accountId });
});

test.skipIf(testEngine !== 'sqlite')('a key revoked by another process within a turn is refused from the next turn on, though the cache answered in this one', async () => {
  const { accountId, testKey } = await createAccount(db, 'a@example.com');
  await nextTurn();
  expect(await authenticate(db, testKey)).toMatchObject({ ok: true, accountId });
  other.prepare('update api_keys set revoked_at = ? where account_id = ?').run(Date.now(), accountId);
  expect(await authenticate(db, testKey)).toMatchObject({ ok: true, accountId });
  await nextTurn();
  expect(await authenticate(db, testKey)).toEqual({ ok: false, code: 'api_key_revoked' });
});

test.skipIf(testEngine !== 'sqlite')('after its turn no read transaction is left open: the WAL can be checkpointed and truncated', async () => {
  const { accountId } = await createAccount(db, 'a@example.com');
  await emailOf(accountId);
  await nextTurn();
  const [result] = other.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number | bigint }>;
  expect(Number(result?.busy)).toBe(0);
});
