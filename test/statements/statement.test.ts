import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Mode } from '../../src/domain/api-key.js';
import { MS_PER_DAY } from '../../src/domain/time.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { availableAtDayEnds } from '../../src/ledger/balance-days.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { parseMonth } from '../../src/statements/month.js';
import { accountStatement, type Statement, StatementUnavailable, statementMonths } from '../../src/statements/statement.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type SeededYear, seedYear } from '../support/statement-year.js';

/**
 * Every statement of a seeded year of activity (test/support/statement-year.ts) against the
 * ledger: opening + movements = closing on both sides of the balance, each closing is the next
 * month's opening and the balance the journal recorded after the month's last movement, the
 * available side is the daily rollup's balance at the month's last day, and the last closing is
 * the balance itself.
 */
let fresh: FreshDatabase;
let db: Db;
let year: SeededYear;
const NOW = Date.UTC(2026, 0, 10, 12);

beforeAll(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  year = await seedYear(db);
});
afterAll(async () => {
  await db?.close();
  await fresh?.dispose();
});

async function statementsOf(mode: Mode): Promise<Statement[]> {
  const months = statementMonths(year.createdAt, NOW).reverse();
  return Promise.all(months.map(async (month) => (await accountStatement(db.kysely, { accountId: year.accountId, mode, month }, NOW)) as Statement));
}

/** The balance the journal recorded after the last movement dated before `to` (zero before any). */
async function journalBalanceBefore(accountId: string, mode: Mode, to: number) {
  const row = await db.kysely
    .selectFrom('journal')
    .select(['balance_available', 'balance_reserved'])
    .where('account_id', '=', accountId)
    .where('mode', '=', mode)
    .where('created_at', '<', BigInt(to))
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { available: BigInt(row?.balance_available ?? 0), reserved: BigInt(row?.balance_reserved ?? 0) };
}

test(`every month of a seeded year reconciles with the ledger to the nanoton (${testEngine})`, async () => {
  expect(await verifyLedger(db.kysely)).toEqual([]);
  for (const mode of ['live', 'test'] as const) {
    const statements = await statementsOf(mode);
    expect(statements.map((s) => s.month)).toEqual([...Array.from({ length: 12 }, (_, i) => `2025-${String(i + 1).padStart(2, '0')}`), '2026-01']);
    expect(statements[0]?.opening).toEqual({ available: 0n, reserved: 0n });
    for (const [i, s] of statements.entries()) {
      const next = statements[i + 1];
      expect(s.closing.available, `${mode} ${s.month} available`).toBe(s.opening.available + s.deposits.amount + s.adjustments.amount - s.placed.amount + s.failed.amount);
      expect(s.closing.reserved, `${mode} ${s.month} reserved`).toBe(s.opening.reserved + s.placed.amount - s.delivered.amount - s.failed.amount);
      expect(s.deposits.ton.amount + s.deposits.usdt.amount).toBe(s.deposits.amount);
      expect(s.delivered.products.reduce((n, p) => n + p.amount, 0n)).toBe(s.delivered.amount);
      expect(s.adjustments.credits - s.adjustments.debits).toBe(s.adjustments.amount);
      expect(s.closing, `${mode} ${s.month} closing against the journal`).toEqual(await journalBalanceBefore(year.accountId, mode, s.to));
      const [dayEnd] = await availableAtDayEnds(db.kysely, { accountId: year.accountId, mode }, s.to / MS_PER_DAY - 1, 1);
      expect(s.closing.available, `${mode} ${s.month} against balance_days`).toBe(dayEnd);
      if (next) expect(next.opening).toEqual(s.closing);
      else expect(s.closing).toEqual(await readBalance(db.kysely, { accountId: year.accountId, mode }));
      expect(s.complete).toBe(s.to <= NOW);
    }
  }
});

test(`the live statements show what was planned, month by month (${testEngine})`, async () => {
  const statements = await statementsOf('live');
  for (const [m, plan] of year.months.entries()) {
    const s = statements[m] as Statement;
    expect(s.deposits.ton.count, s.month).toBe(plan.tonDeposits);
    expect(s.deposits.usdt.count, s.month).toBe(plan.usdtDeposits);
    expect(s.delivered.products.map((p) => [p.product, p.count])).toEqual([['stars', plan.delivered.stars]]);
    expect(s.failed.count, s.month).toBe(plan.failed);
    expect(s.placed.count, s.month).toBe(plan.placed);
    expect(s.adjustments.count, s.month).toBe(plan.adjustments);
    if (plan.usdtDeposits) {
      // 12.345678 USDT at 2.5 USD/TON less 1 %: 4.888888488 TON, rounded down.
      expect(s.deposits.usdt.lines).toMatchObject([{ usdt: 12_345_678n, rate: '2.5', amount: 4_888_888_488n }]);
      expect(s.deposits.usdt.usdt).toBe(12_345_678n);
    }
  }
  // The order placed in December's last second is still reserved: the year closes with it.
  const december = statements[11] as Statement;
  expect(december.closing.reserved).toBeGreaterThan(0n);
  const january = statements[12] as Statement;
  expect(january.placed.count).toBe(0);
  expect(january.complete).toBe(false);
  // The test balance's movements stay on the test statement.
  const test = await statementsOf('test');
  expect(test[0]?.deposits).toMatchObject({ count: 1, amount: 50_000_000_000n, usdt: { count: 0 } });
  expect(test[0]?.delivered.count).toBe(1);
  expect(statements[0]?.delivered.count).toBe(1);
});

test(`a month before the account or not yet begun has no statement (${testEngine})`, async () => {
  const ask = (month: string) => accountStatement(db.kysely, { accountId: year.accountId, mode: 'live', month: parseMonth(month)! }, NOW);
  await expect(ask('2024-12')).rejects.toThrow(
    new StatementUnavailable({ reason: 'before_account', message: 'No statement for 2024-12: the account did not exist yet (statements cover 2025-01 to 2026-01).' }),
  );
  await expect(ask('2026-02')).rejects.toMatchObject({ why: { reason: 'not_begun' } });
  expect(await accountStatement(db.kysely, { accountId: 'acct_nosuch', mode: 'live', month: parseMonth('2025-05')! }, NOW)).toBeUndefined();
});
