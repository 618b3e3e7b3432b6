import { sql } from 'kysely';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { coalescedRead, preparedQuery } from '../../src/db/prepared.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

let fresh: FreshDatabase;
let db: Db;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
});

afterEach(async () => {
  await db.close();
  await fresh.dispose();
});

test(`a prepared query answers like the query it was built from, for every argument, in and out of transactions (${testEngine})`, async () => {
  const a = await createAccount(db, 'a@example.com');
  const b = await createAccount(db, 'b@example.com');
  const byEmail = preparedQuery((k, email: string, status: 'active' | 'disabled') =>
    k.selectFrom('accounts').select(['id', 'email']).where('email', '=', email).where('status', '=', status).where('id', 'like', 'acct_%'),
  );
  expect(await byEmail(db.kysely, 'a@example.com', 'active')).toEqual([{ id: a.accountId, email: 'a@example.com' }]);
  expect(await byEmail(db.kysely, 'b@example.com', 'active')).toEqual([{ id: b.accountId, email: 'b@example.com' }]);
  expect(await byEmail(db.kysely, 'b@example.com', 'disabled')).toEqual([]);
  // A constant the builder wrote itself ('acct_%') stays in place between the arguments.
  expect(await byEmail(db.kysely, "x' or '1'='1", 'active')).toEqual([]);
  const inside = await db.kysely.transaction().execute((tx) => byEmail(tx, 'a@example.com', 'active'));
  expect(inside).toEqual([{ id: a.accountId, email: 'a@example.com' }]);
});

test(`a prepared query outside a transaction never reads another one's uncommitted writes (${testEngine})`, async () => {
  const byEmail = preparedQuery((k, email: string) => k.selectFrom('accounts').select('email').where('email', '=', email));
  // A transaction left open across turns of the event loop, as a slow unit of work would.
  const trx = await db.kysely.startTransaction().execute();
  await trx.insertInto('accounts').values({ id: 'acct_uncommitted', email: 'u@example.com', status: 'active', created_at: 1 }).execute();
  const outside = byEmail(db.kysely, 'u@example.com');
  await new Promise((resolve) => setImmediate(resolve));
  await trx.rollback().execute();
  expect(await outside).toEqual([]);
  expect(await byEmail(db.kysely, 'u@example.com')).toEqual([]);
});

test('a builder that converts its argument is refused at the first call, not answered wrongly', async () => {
  const converted = preparedQuery((k, email: string) => k.selectFrom('accounts').select('id').where('email', '=', email.toLowerCase()));
  await expect(converted(db.kysely, 'A@example.com')).rejects.toThrow(/argument 0 does not reach the query/);
});

test.skipIf(testEngine !== 'postgres')('on PostgreSQL a prepared query is a named server-side statement, parsed once per connection', async () => {
  const one = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL, poolSize: 1 });
  try {
    await createAccount(one, 'a@example.com');
    const byEmail = preparedQuery((k, email: string) => k.selectFrom('accounts').select('id').where('email', '=', email));
    expect(await byEmail(one.kysely, 'a@example.com')).toHaveLength(1);
    expect(await byEmail(one.kysely, 'b@example.com')).toEqual([]);
    // The pool's only connection: its prepared statements are the session's own.
    const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(one.kysely);
    const named = rows.filter((row) => row.statement.includes('"email" = $1'));
    expect(named).toEqual([{ name: expect.stringMatching(/^starport_\d+$/), statement: expect.stringContaining('from "accounts"') }]);
  } finally {
    await one.close();
  }
});

/** A coalesced read of accounts by email that counts the statements each side sends. */
function countedEmailRead() {
  const sent = { one: 0, many: [] as string[][] };
  const one = preparedQuery((k, email: string) => k.selectFrom('accounts').select(['id', 'email']).where('email', '=', email));
  const many = preparedQuery((k, emails: string[]) => k.selectFrom('accounts').select(['id', 'email']).where('email', '=', sql<string>`any(${emails})`));
  const read = coalescedRead(
    (k, email: string) => {
      sent.one++;
      return one(k, email);
    },
    (k, emails: string[]) => {
      sent.many.push(emails);
      return many(k, emails);
    },
    (row) => row.email,
  );
  return { read, sent };
}

test(`coalesced reads asked for together each get their own rows (${testEngine})`, async () => {
  const a = await createAccount(db, 'a@example.com');
  const b = await createAccount(db, 'b@example.com');
  const { read, sent } = countedEmailRead();
  const answers = await Promise.all(['a@example.com', 'b@example.com', 'a@example.com', 'nobody@example.com'].map((email) => read(db.kysely, email)));
  expect(answers).toEqual([
    [{ id: a.accountId, email: 'a@example.com' }],
    [{ id: b.accountId, email: 'b@example.com' }],
    [{ id: a.accountId, email: 'a@example.com' }],
    [],
  ]);
  if (testEngine === 'postgres') {
    // One statement, each key once.
    expect(sent).toEqual({ one: 0, many: [['a@example.com', 'b@example.com', 'nobody@example.com']] });
  } else {
    // SQLite's connection is in-process: nothing to save, each read runs at once.
    expect(sent).toEqual({ one: 4, many: [] });
  }
  // Inside a transaction a read is the transaction's own statement, never merged.
  const inside = await db.kysely.transaction().execute((tx) => read(tx, 'b@example.com'));
  expect(inside).toEqual([{ id: b.accountId, email: 'b@example.com' }]);
  expect(sent.one).toBe(testEngine === 'postgres' ? 1 : 5);
});

test.skipIf(testEngine !== 'postgres')('a coalesced read never joins a statement already sent: it sees what committed before it was asked for', async () => {
  const { read, sent } = countedEmailRead();
  const early = read(db.kysely, 'late@example.com');
  // Let the first statement go out, then commit a row and ask again while it may be in flight.
  await new Promise((resolve) => setImmediate(resolve));
  await createAccount(db, 'late@example.com');
  const late = read(db.kysely, 'late@example.com');
  await early; // sent before the commit: it may or may not see the row
  expect(await late).toEqual([{ id: expect.stringMatching(/^acct_/), email: 'late@example.com' }]);
  expect(sent.many).toEqual([['late@example.com'], ['late@example.com']]);
});

test.skipIf(testEngine !== 'postgres')('a failed coalesced statement fails every read that was merged into it', async () => {
  const broken = coalescedRead(
    async (): Promise<Array<{ id: string }>> => {
      throw new Error('PostgreSQL merges these reads: the single-key statement is not used');
    },
    preparedQuery((k, ids: string[]) => k.selectFrom('accounts').select('id').where('id', '=', sql<string>`any(${ids})`).where(sql<boolean>`1 / 0 = 1`)),
    (row) => row.id,
  );
  const reads = ['acct_a', 'acct_b'].map((id) => broken(db.kysely, id));
  for (const read of reads) await expect(read).rejects.toThrow(/division by zero/);
});
