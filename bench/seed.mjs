// @ts-check
// Accounts, keys and orders for the bench, written straight through the service's own modules
// (dist/) into the database the bench's `serve` uses.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createAccount } from '../dist/accounts/accounts.js';
import { openDatabase } from '../dist/db/open.js';
import { parseTon } from '../dist/domain/money.js';
import { adjustBalance } from '../dist/ledger/adjust.js';

/** @param {{ dataDir: string, databaseUrl?: string, accounts: number }} options (PostgreSQL when databaseUrl is set) */
export async function seedBench({ dataDir, databaseUrl, accounts }) {
  const db = await openDatabase({ dataDir, databaseUrl });
  const keys = [];
  let accountId;
  for (let i = 0; i < accounts; i++) {
    const account = await createAccount(db, `bench-${randomUUID()}@example.com`);
    await adjustBalance(db, { accountId: account.accountId, mode: 'test', amount: parseTon('1000000000'), reason: 'bench funding' });
    keys.push(account.testKey);
    accountId ??= account.accountId;
  }
  const orderId = `ord_bench${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const now = Date.now();
  // SQLite has no sequence for the internal order number: the seeder numbers its orders on from
  // the highest (PostgreSQL's identity column numbers them itself).
  let orderNo = databaseUrl ? undefined : Number(/** @type {{ n: unknown }} */ ((await sql`select coalesce(max(order_no), 0) as n from orders`.execute(db.kysely)).rows[0]).n);
  const order = (id, key) => ({
    id,
    account_id: accountId,
    mode: 'test',
    idempotency_key: key,
    fingerprint: '[]',
    product: 'stars',
    recipient: 'bench_user',
    quantity: 50,
    amount: 250000000,
    external_id: null,
    status: 'delivered',
    created_at: now,
    updated_at: now,
    next_run_at: null,
    ...(orderNo === undefined ? {} : { order_no: ++orderNo }),
  });
  // Orders are written directly, without journal rows: the bench database is thrown away.
  await db.kysely.insertInto('orders').values(order(orderId, 'bench-read')).execute();
  let added = 0; // bulk orders so far: their idempotency keys go on from there
  return {
    keys,
    orderId,
    /** Bulk orders (already delivered, so the workers ignore them) to grow the table. */
    async addOrders(count) {
      const batch = 2000; // SQLite caps bound parameters per statement
      for (let done = 0; done < count; done += batch) {
        const rows = Array.from({ length: Math.min(batch, count - done) }, (_, i) => order(`ord_bulk${added + done + i}x${randomUUID().slice(0, 8)}`, `bulk-${added + done + i}`));
        await db.kysely.transaction().execute((tx) => tx.insertInto('orders').values(rows).execute());
      }
      added += count;
      // A million rows in a minute is not how a table grows, and the measurement that follows
      // must not share the cores with its aftermath: PostgreSQL's autovacuum analysing the
      // table; on SQLite, the checkpoint of a WAL hundreds of megabytes long and the kernel
      // writing the fresh pages back to disk (about 30 s after they were written).
      if (databaseUrl) await sql`vacuum analyze orders`.execute(db.kysely);
      else await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);
      execFileSync('sync');
    },
    close: () => db.close(),
  };
}
