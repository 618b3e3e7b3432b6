import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { allowSlowProcesses, type Cli, createAccount, fails, ok, openFresh, operatorCli, seedAccount, seedOrder } from './helpers.js';

allowSlowProcesses();
/** `balance debit`, `stats` and `audit list`, each database to itself so that totals are exact. */
let fresh: FreshDatabase;
let cli: Cli;
let db: Db;

beforeAll(async () => {
  fresh = await freshDatabase();
  cli = operatorCli(fresh);
  await ok(cli, ['migrate', '--json']);
  db = await openFresh(fresh);
});

afterAll(async () => {
  await db?.close();
  await fresh?.dispose();
});

describe('balance debit', () => {
  test('takes a withdrawal off the available balance; it shows in the balance history with its reason', async () => {
    const account = await seedAccount(db, { live: '10' });
    const id = account.account_id;
    const debited = await ok(cli, [
      'balance',
      'debit',
      '--account',
      id,
      '--mode',
      'live',
      '--amount',
      '2.5',
      '--reason',
      'withdrawal to EQ… (ticket 12)',
      '--actor',
      'erin',
      '--json',
    ]);
    expect(debited).toEqual({ debited: { value: '2.5', currency: 'TON' }, balance: { value: '7.5', reserved: '0', currency: 'TON' } });
    const text = await ok(cli, ['balance', 'debit', '--account', id, '--mode', 'live', '--amount', '0.000000001', '--reason', 'rounding']);
    expect(text.stdout).toMatch(/debited 0\.000000001 TON from the live balance of acct_\w+: 7\.499999999 TON available/);
    expect(await readBalance(db.kysely, { accountId: id, mode: 'live' })).toEqual({ available: 7_499_999_999n, reserved: 0n });

    // The client's balance history is the journal: a signed adjustment with the reason.
    const history = (await ok(cli, ['account', 'show', id, '--json'])).history;
    expect(history.slice(0, 2)).toEqual([
      expect.objectContaining({ mode: 'live', kind: 'adjustment', available_delta: '-0.000000001', reserved_delta: '0', reason: 'rounding' }),
      expect.objectContaining({ mode: 'live', kind: 'adjustment', available_delta: '-2.5', reserved_delta: '0', reason: 'withdrawal to EQ… (ticket 12)' }),
    ]);
    const audit = (await ok(cli, ['audit', 'list', '--account', id, '--action', 'balance.debit', '--json'])).entries;
    expect(audit).toHaveLength(2);
    expect(audit[1]).toMatchObject({
      actor: 'erin',
      mode: 'live',
      reason: 'withdrawal to EQ… (ticket 12)',
      details: { amount: '2.5', available_before: '10', available_after: '7.5' },
    });
    expect((await ok(cli, ['ledger', 'verify', '--json'])).ok).toBe(true);
  });

  test('cannot touch reserved money or go below zero; bad input changes nothing', async () => {
    const account = await seedAccount(db, { test: '1' });
    const id = account.account_id;
    await seedOrder(db, id); // reserves 0.25
    const base = ['balance', 'debit', '--account', id, '--mode', 'test', '--reason', 'refund'];
    await fails(cli, [...base, '--amount', '0.750000001', '--json'], /below zero/);
    await fails(cli, [...base, '--amount=-1'], /amount/);
    await fails(cli, [...base, '--amount', '0', '--json'], /greater than 0/);
    await fails(cli, [...base, '--amount', '1e3'], /amount/);
    await fails(cli, ['balance', 'debit', '--account', id, '--mode', 'test', '--amount', '0.1', '--json'], /--reason/);
    await fails(cli, ['balance', 'debit', '--account', id, '--amount', '0.1', '--reason', 'x'], /--mode/);
    await fails(cli, ['balance', 'debit', '--account', 'acct_nobody0000000000000', '--mode', 'test', '--amount', '0.1', '--reason', 'x', '--json'], /acct_nobody0000000000000/);
    expect(await readBalance(db.kysely, { accountId: id, mode: 'test' })).toEqual({ available: 750_000_000n, reserved: 250_000_000n });
    // Exactly what is available can go.
    expect((await ok(cli, [...base, '--amount', '0.75', '--json'])).balance).toEqual({ value: '0', reserved: '0.25', currency: 'TON' });
  });

  test('balance credit is audited as a credit, or as a debit when negative', async () => {
    const account = await createAccount(cli);
    await ok(cli, ['balance', 'credit', '--account', account.account_id, '--mode', 'test', '--amount', '3', '--reason', 'promo', '--json']);
    await ok(cli, ['balance', 'credit', '--account', account.account_id, '--mode', 'test', '--amount=-1', '--reason', 'promo clawback', '--json']);
    const entries = (await ok(cli, ['audit', 'list', '--account', account.account_id, '--json'])).entries;
    expect(entries.map((e: { action: string; details: { signed_amount?: string } }) => [e.action, e.details.signed_amount])).toEqual([
      ['balance.debit', '-1'],
      ['balance.credit', '3'],
      ['account.create', undefined],
    ]);
  });
});

describe('stats', () => {
  test("counts accounts, sums balances, counts today's orders by status, and sums delivered amounts for a period", async () => {
    // A database of its own: totals are exact.
    const own = await freshDatabase();
    const ownCli = operatorCli(own);
    const ownDb = await (async () => {
      await ok(ownCli, ['migrate', '--json']);
      return openFresh(own);
    })();
    try {
      const a = await seedAccount(ownDb, { live: '10', test: '5' });
      const b = await seedAccount(ownDb, { live: '1' });
      await ok(ownCli, ['account', 'disable', b.account_id, '--reason', 'x', '--json']);
      const delivered = await seedOrder(ownDb, a.account_id, { mode: 'live' });
      await ok(ownCli, ['order', 'resolve', delivered.id, '--delivered', '--reason', 'ok', '--json']);
      const failed = await seedOrder(ownDb, a.account_id, { mode: 'live', quantity: 100 });
      await ok(ownCli, ['order', 'resolve', failed.id, '--failed', '--reason', 'no', '--json']);
      await seedOrder(ownDb, a.account_id, { mode: 'live', quantity: 200 }); // held: 1 TON reserved
      await seedOrder(ownDb, a.account_id, { hold: false }); // test, queued

      const stats = await ok(ownCli, ['stats', '--json']);
      expect(stats.accounts).toEqual({ total: 2, active: 1, disabled: 1 });
      // live: 11 credited − 0.25 delivered; 1 TON of it reserved by the held order.
      expect(stats.balances.live).toEqual({ available: '9.75', reserved: '1', currency: 'TON' });
      expect(stats.balances.test).toEqual({ available: '4.75', reserved: '0.25', currency: 'TON' });
      expect(stats.orders_today.live).toEqual({ fulfillment_pending: 0, processing: 1, delivered: 1, failed: 1 });
      expect(stats.orders_today.test).toEqual({ fulfillment_pending: 1, processing: 0, delivered: 0, failed: 0 });
      expect(stats.open_orders).toEqual({ live: { fulfillment_pending: 0, processing: 1 }, test: { fulfillment_pending: 1, processing: 0 } });
      expect(stats.revenue.live).toEqual({ amount: '0.25', currency: 'TON', orders: 1 });
      expect(stats.revenue.test).toEqual({ amount: '0', currency: 'TON', orders: 0 });

      const lastWeek = await ok(ownCli, ['stats', '--since', '7d', '--until', 'now', '--json']);
      expect(lastWeek.revenue.live.amount).toBe('0.25');
      const before = await ok(ownCli, ['stats', '--since', '2000-01-01', '--until', '2000-01-02', '--json']);
      expect(before.revenue).toMatchObject({ since: '2000-01-01T00:00:00.000Z', until: '2000-01-02T00:00:00.000Z', live: { amount: '0', orders: 0 } });

      const text = await ok(ownCli, ['stats']);
      expect(text.stdout).toMatch(/accounts: 2 \(1 active, 1 disabled\)/);
      expect(text.stdout).toMatch(/live balances held: 9\.75 TON available, 1 TON reserved/);
      expect(text.stdout).toMatch(/revenue .*live 0\.25 TON \(1 orders delivered\)/);
      await fails(ownCli, ['stats', '--since', '1d', '--until', '2d', '--json'], /--until must be after --since/);
      await fails(ownCli, ['stats', '--since', 'last week'], /--since/);
    } finally {
      await ownDb.close();
      await own.dispose();
    }
  });
});

describe('audit list', () => {
  test('newest first, filtered by account, action, actor and time, limited; text is a table', async () => {
    const account = await createAccount(cli, { test: '1' });
    const id = account.account_id;
    await ok(cli, ['account', 'disable', id, '--reason', 'r1', '--actor', 'frank', '--json']);
    await ok(cli, ['account', 'enable', id, '--reason', 'r2', '--actor', 'frank', '--json']);

    const all = (await ok(cli, ['audit', 'list', '--account', id, '--json'])).entries;
    expect(all.map((e: { action: string }) => e.action)).toEqual(['account.enable', 'account.disable', 'balance.credit', 'account.create']);
    for (const entry of all) {
      expect(Object.keys(entry).sort()).toEqual(['account_id', 'action', 'actor', 'created_at', 'details', 'id', 'mode', 'order_id', 'reason', 'source']);
      expect(entry.id).toMatch(/^aud_[0-9A-Za-z]{22}$/);
    }
    const byFrank = (await ok(cli, ['audit', 'list', '--account', id, '--actor', 'frank', '--json'])).entries;
    expect(byFrank.map((e: { reason: string }) => e.reason)).toEqual(['r2', 'r1']);
    const one = (await ok(cli, ['audit', 'list', '--account', id, '--limit', '1', '--json'])).entries;
    expect(one.map((e: { action: string }) => e.action)).toEqual(['account.enable']);
    expect((await ok(cli, ['audit', 'list', '--since', '2999-01-01', '--json'])).entries).toEqual([]);
    expect((await ok(cli, ['audit', 'list', '--account', id, '--since', '1h', '--json'])).entries).toHaveLength(4);

    const text = await ok(cli, ['audit', 'list', '--account', id]);
    expect(text.stdout.split('\n')[0]).toMatch(/^TIME\s+ACTOR\s+ACTION/);
    expect(text.stdout).toMatch(/frank\s+account\.disable/);
    await fails(cli, ['audit', 'list', '--limit', 'ten'], /--limit/);
    await fails(cli, ['audit', 'list', '--since', 'x', '--json'], /--since/);
  });

  test('the audit log is append-only: the database refuses updates and deletes', async () => {
    await ok(cli, ['account', 'create', '--email', `append-only-${Date.now()}@example.com`, '--json']);
    await expect(db.kysely.updateTable('audit_log').set({ actor: 'mallory' }).execute()).rejects.toThrow(/immutable/);
    await expect(db.kysely.deleteFrom('audit_log').execute()).rejects.toThrow(/immutable/);
  });
});
