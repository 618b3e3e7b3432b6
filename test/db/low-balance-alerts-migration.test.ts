import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import type { Database } from '../../src/db/schema.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { applyMovement } from '../../src/ledger/ledger.js';
import { lowBalanceAlerts, setLowBalanceThreshold } from '../../src/ledger/low-balance.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0017-low-balance-alerts on a database with balances: every balance keeps its figures
 * and has no threshold (no alert until the client sets one), and movements afterwards see the
 * threshold once it is set.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('existing balances get no threshold and keep their figures; a set one is seen by movements', async () => {
  await migrateUpTo(db, engine, '0015-order-chart-amounts');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db
    .insertInto('balances')
    .values([
      { account_id: 'acct_a', mode: 'live', available: 7_000_000_000, reserved: 1, journal_seq: 4 },
      { account_id: 'acct_a', mode: 'test', available: 0, reserved: 0, journal_seq: 0 },
    ])
    .execute();
  await migrateToLatest(db, engine);

  const rows = await db.selectFrom('balances').selectAll().orderBy('mode').execute();
  expect(rows.map((r) => [r.mode, String(r.available), String(r.reserved), String(r.journal_seq), r.low_balance_threshold])).toEqual([
    ['live', '7000000000', '1', '4', null],
    ['test', '0', '0', '0', null],
  ]);
  expect(await lowBalanceAlerts(db, 'acct_a')).toEqual([
    { mode: 'live', threshold: null, available: 7_000_000_000n, below: false },
    { mode: 'test', threshold: null, available: 0n, below: false },
  ]);

  const ref = { accountId: 'acct_a', mode: 'live' as const };
  const debit = (now: number) =>
    db.transaction().execute((tx) => applyMovement(tx as unknown as Kysely<Database>, ref, { kind: 'adjustment', amount: -1_000_000_000n, reason: 'x', now }));
  const none = await debit(10);
  expect(none?.crossedBelow).toBeNull();
  await setLowBalanceThreshold(db, ref, 5_500_000_000n);
  const crossing = await debit(11);
  expect(crossing).toMatchObject({ after: { available: 5_000_000_000n }, crossedBelow: 5_500_000_000n });
  const below = await debit(12);
  expect(below?.crossedBelow).toBeNull();
});
