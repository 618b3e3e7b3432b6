// @ts-check
// `node bench/charts.mjs [count]`: the overview's chart queries (src/http/web/charts.ts) on one
// account with a million orders and a million journal rows in its last 30 days, the worst case
// (every row in the window). Writes rows in bulk, straight into a scratch SQLite database (or
// PostgreSQL with DATABASE_URL, into the database it names: use a scratch one), with the daily
// rollups (order_days, balance_days) those rows make, as migration 0018 fills them; prints the
// median of 7 runs and SQLite's query plans. Run `npm run build` first.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../dist/accounts/accounts.js';
import { openDatabase } from '../dist/db/open.js';
import { chartData } from '../dist/http/web/charts.js';

const COUNT = Number(process.argv[2] ?? 1_000_000);
const databaseUrl = process.env.DATABASE_URL;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-charts-'));
const db = await openDatabase({ dataDir, databaseUrl });
try {
  const { accountId } = await createAccount(db, `charts-${randomUUID()}@example.com`);
  const now = Date.now();
  const start = now - 30 * 86_400_000;
  let orderNo = databaseUrl ? undefined : Number(/** @type {{ n: unknown }} */ ((await sql`select coalesce(max(order_no), 0) as n from orders`.execute(db.kysely)).rows[0]).n);
  const seqStart = Number(
    /** @type {{ n: unknown }} */ ((await sql`select coalesce(max(seq), 0) as n from journal where account_id = ${accountId} and mode = 'test'`.execute(db.kysely)).rows[0]).n,
  );
  const batch = 1000;
  const DAY = 86_400_000;
  const orderDays = new Map(); // day → [delivered, delivered amount, failed, failed amount]
  const balanceDays = new Map(); // day → net
  const began = performance.now();
  for (let done = 0; done < COUNT; done += batch) {
    const n = Math.min(batch, COUNT - done);
    const orders = [];
    const journal = [];
    for (let i = 0; i < n; i++) {
      const k = done + i;
      const at = start + Math.floor((k / COUNT) * (now - start));
      const failed = k % 10 === 0;
      const day = Math.floor(at / DAY);
      const counts = orderDays.get(day) ?? [0, 0, 0, 0];
      counts[failed ? 2 : 0] += 1;
      counts[failed ? 3 : 1] += 250_000_000;
      orderDays.set(day, counts);
      balanceDays.set(day, (balanceDays.get(day) ?? 0) + 1);
      orders.push({
        id: `ord_c${k}x${randomUUID().slice(0, 8)}`,
        account_id: accountId,
        mode: 'test',
        idempotency_key: `c-${k}`,
        fingerprint: '[]',
        product: 'stars',
        recipient: 'chart_user',
        quantity: 50,
        amount: 250_000_000,
        external_id: null,
        status: failed ? 'failed' : 'delivered',
        created_at: at,
        updated_at: at,
        next_run_at: null,
        ...(orderNo === undefined ? {} : { order_no: ++orderNo }),
      });
      journal.push({
        id: `jrn_c${k}x${randomUUID().slice(0, 8)}`,
        account_id: accountId,
        mode: 'test',
        kind: 'adjustment',
        order_id: null,
        order_no: null,
        available_delta: 1,
        reserved_delta: 0,
        reason: 'charts bench',
        created_at: at,
        seq: seqStart + k + 1,
        balance_available: k + 1,
        balance_reserved: 0,
      });
    }
    await db.kysely.transaction().execute(async (tx) => {
      await tx.insertInto('orders').values(orders).execute();
      await tx.insertInto('journal').values(journal).execute();
    });
  }
  await db.kysely
    .insertInto('order_days')
    .values(
      [...orderDays].map(([day, [delivered, deliveredAmount, failed, failedAmount]]) => ({
        account_id: accountId,
        mode: 'test',
        day,
        delivered,
        delivered_amount: deliveredAmount,
        failed,
        failed_amount: failedAmount,
      })),
    )
    .execute();
  await db.kysely
    .insertInto('balance_days')
    .values([...balanceDays].map(([day, net]) => ({ account_id: accountId, mode: 'test', day, available_net: net })))
    .execute();
  await db.kysely
    .updateTable('balances')
    .set({ available: COUNT, journal_seq: seqStart + COUNT })
    .where('account_id', '=', accountId)
    .where('mode', '=', 'test')
    .execute();
  console.log(`inserted ${COUNT} orders and ${COUNT} journal rows in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  if (databaseUrl) await sql`vacuum analyze`.execute(db.kysely);
  else await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db.kysely);

  const times = [];
  let data;
  for (let i = 0; i < 8; i++) {
    const t = performance.now();
    data = await chartData(db, { accountId, mode: 'test' });
    if (i > 0) times.push(performance.now() - t); // the first run warms the cache
  }
  times.sort((a, b) => a - b);
  console.log(`chartData (the two statements, in parallel): median ${times[3].toFixed(1)} ms, min ${times[0].toFixed(1)}, max ${times[times.length - 1].toFixed(1)} (7 runs)`);
  console.log(`totals: ${JSON.stringify(data.totals)}, balance now ${data.balance.at(-1)}`);
  if (!databaseUrl) {
    const first = Math.floor(now / DAY) - 29;
    for (const [name, text] of [
      [
        'orders',
        `select day, delivered, delivered_amount, failed, failed_amount from order_days where account_id = '${accountId}' and mode = 'test' and day >= ${first} and day <= ${first + 29}`,
      ],
      [
        'balance',
        `select null as day, available from balances where account_id = '${accountId}' and mode = 'test' union all select day, available_net from balance_days where account_id = '${accountId}' and mode = 'test' and day > ${first}`,
      ],
    ]) {
      const plan = await sql.raw(`explain query plan ${text}`).execute(db.kysely);
      console.log(`plan (${name}):\n  ${plan.rows.map((r) => /** @type {{ detail: string }} */ (r).detail).join('\n  ')}`);
    }
  }
} finally {
  await db.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
