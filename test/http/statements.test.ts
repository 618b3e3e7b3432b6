import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseMonth } from '../../src/statements/month.js';
import { accountStatement } from '../../src/statements/statement.js';
import { statementBody } from '../../src/statements/wire.js';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectError, expectOk } from '../support/http.js';
import { type SeededYear, seedYear } from '../support/statement-year.js';

/** GET /statements/{month}: the key's balance over a month, its 404s and its 400. */

let h: Harness;
let year: SeededYear;
beforeAll(async () => {
  h = await startHarness();
  year = await seedYear(h.service.db);
});
afterAll(async () => {
  await h.close();
});

const statement = (key: string, month: string) => call(h, { path: `/statements/${month}`, key });

test('a month of the live balance, its figures adding up', async () => {
  const res = await statement(year.liveKey, '2025-02');
  expectOk(res);
  const s = res.body;
  expect(s).toMatchObject({
    object: 'statement',
    month: '2025-02',
    mode: 'live',
    complete: true,
    period_start: '2025-02-01T00:00:00.000Z',
    period_end: '2025-03-01T00:00:00.000Z',
  });
  // February: a TON and a USDT deposit, January's last order delivered on the 1st, a Stars order
  // delivered, a Premium order failed, an operator debit, an order placed in the last second.
  expect(s.deposits).toMatchObject({ count: 2, ton: { count: 1, amount: '20.001234567' }, usdt: { count: 1, usdt: '12.345678', amount: '4.888888488' } });
  expect(s.deposits.usdt.items).toMatchObject([{ usdt: '12.345678', rate: '2.5', amount: '4.888888488', credited_at: '2025-02-03T12:00:00.000Z' }]);
  expect(s.orders_placed.count).toBe(3);
  // The service's worker may settle the seeded orders itself (it races the seeding): the
  // statement is compared with the ledger's own figures, which test/statements reconciles.
  const own = await accountStatement(h.service.db.kysely, { accountId: year.accountId, mode: 'live', month: parseMonth('2025-02')! });
  expect(s).toEqual({ ok: true, ...statementBody(own!), generated_at: s.generated_at });
  expect(s.adjustments).toMatchObject({ count: 1, credits: '0', debits: '1.000000008', net: '-1.000000008' });
  // The operator's reasons are internal notes: not in the statement.
  expect(JSON.stringify(s)).not.toContain('monthly');
  const march = await statement(year.liveKey, '2025-03');
  expect(march.body.opening_balance).toEqual(s.closing_balance);
  expect(s.closing_balance.reserved).not.toBe('0');
});

test('a test key gets the test balance’s statement', async () => {
  const res = await statement(year.testKey, '2025-01');
  expectOk(res);
  expect(res.body).toMatchObject({ mode: 'test', deposits: { count: 1, amount: '50', usdt: { count: 0 } }, orders_placed: { count: 1 } });
  // The current month is there too, incomplete.
  const now = new Date();
  const current = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  const live = await statement(year.liveKey, current);
  expectOk(live);
  expect(live.body.complete).toBe(false);
});

test('a month not begun, or before the account, is 404 with the reason', async () => {
  const future = await statement(year.liveKey, '2099-01');
  expectError(future, 404, 'statement_not_found', 'month');
  expect(future.body.error.details).toEqual({ reason: 'not_begun' });
  expect(future.body.error.message).toMatch(/^No statement for 2099-01: that month has not begun \(statements cover 2025-01 to \d{4}-\d{2}\)\.$/);
  const before = await statement(year.liveKey, '2024-12');
  expectError(before, 404, 'statement_not_found', 'month');
  expect(before.body.error.details).toEqual({ reason: 'before_account' });
  expect(before.body.error.message).toContain('the account did not exist yet');
  // A new account has only the current month.
  const fresh = await h.account();
  expectError(await statement(fresh.liveKey, '2025-06'), 404, 'statement_not_found', 'month');
});

test('a malformed month is 400 naming month', async () => {
  for (const month of ['2025-1', '2025-13', '2025-00', '25-01', '2025-01-01', 'latest', '2025-0１', '1969-12']) {
    const res = await statement(year.liveKey, encodeURIComponent(month));
    expectError(res, 400, 'invalid_request', 'month');
    expect(res.body.error.message).toBe('month must be a calendar month written YYYY-MM, e.g. 2026-10.');
  }
  expectError(await call(h, { path: '/statements/2025-01' }), 401, 'missing_api_key');
});
