import pg from 'pg';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { QUEUED_CHANNEL } from '../../src/db/engine.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { parseTon } from '../../src/domain/money.js';
import { newId } from '../../src/domain/random.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { Order } from '../../src/orders/order.js';
import { findOrderById, listEvents } from '../../src/orders/order-store.js';
import { placeInOneStatement } from '../../src/orders/place-in-one-statement.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * PostgreSQL's one-statement order placement: it writes what the general path writes, or
 * nothing, and its statement carries the lock cap and the NOTIFY of the general path's
 * transaction.
 */
/**
 * Until some other session of the database waits for a lock (a statement of the test's). The
 * observer may be inside a transaction, which would see one snapshot of the activity for its
 * whole length (stats_fetch_consistency): each look takes a fresh one.
 */
async function waitUntilBlocked(observer: pg.Client): Promise<void> {
  for (;;) {
    await observer.query('select pg_stat_clear_snapshot()');
    const { rows } = await observer.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.skipIf(testEngine !== 'postgres')('an order placed in one statement (PostgreSQL)', () => {
  let fresh: FreshDatabase;
  let db: Db;
  let accountId: string;

  beforeEach(async () => {
    fresh = await freshDatabase();
    db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
    ({ accountId } = await createAccount(db, 'fast@example.com'));
    await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('10'), reason: 'test funding' });
  });

  afterEach(async () => {
    await db.close();
    await fresh.dispose();
  });

  const pending = (amount: string, key = newId('req')): Order => {
    const now = Date.now();
    return {
      id: newId('ord'),
      accountId,
      mode: 'test',
      idempotencyKey: key,
      fingerprint: '[]',
      product: 'stars',
      recipient: 'alice_test',
      quantity: 50,
      amount: parseTon(amount),
      externalId: 'ext-1',
      status: 'fulfillment_pending',
      failureReason: null,
      createdAt: now,
      updatedAt: now,
      nextRunAt: now,
    };
  };

  test('places the order, its order.created event and its reservation, with a journal row the ledger check accepts', async () => {
    const order = pending('2.5');
    expect(await placeInOneStatement(db.kysely, order, 10_000)).toBe(true);
    expect(await findOrderById(db.kysely, order.id)).toEqual(order);
    const events = await listEvents(db.kysely, order.id);
    expect(events.map((e) => [e.seq, e.type, e.status, e.data])).toEqual([[1, 'order.created', 'fulfillment_pending', { amount: '2.5' }]]);
    expect(await readBalance(db.kysely, { accountId, mode: 'test' })).toEqual({ available: parseTon('7.5'), reserved: parseTon('2.5') });
    const journal = await db.kysely.selectFrom('journal').selectAll().where('order_id', '=', order.id).execute();
    expect(journal).toMatchObject([
      { kind: 'reserve', available_delta: -parseTon('2.5'), reserved_delta: parseTon('2.5'), seq: 2n, balance_available: parseTon('7.5'), balance_reserved: parseTon('2.5') },
    ]);
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });

  test('places nothing when the balance does not cover the amount', async () => {
    const order = pending('10.000000001');
    expect(await placeInOneStatement(db.kysely, order, 10_000)).toBe(false);
    expect(await findOrderById(db.kysely, order.id)).toBeUndefined();
    expect(await db.kysely.selectFrom('order_events').select('id').execute()).toEqual([]);
    expect(await readBalance(db.kysely, { accountId, mode: 'test' })).toEqual({ available: parseTon('10'), reserved: 0n });
  });

  test('places nothing for an account with an enabled webhook endpoint (its outbox is the general path’s)', async () => {
    await db.kysely
      .insertInto('webhook_endpoints')
      .values({
        id: 'we_fast',
        account_id: accountId,
        mode: 'test',
        url: 'https://example.com/hook',
        events: '["*"]',
        secret: 'whsec_x',
        status: 'enabled',
        created_at: 1,
        updated_at: 1,
      })
      .execute();
    const order = pending('1');
    expect(await placeInOneStatement(db.kysely, order, 10_000)).toBe(false);
    expect(await findOrderById(db.kysely, order.id)).toBeUndefined();
    expect(await readBalance(db.kysely, { accountId, mode: 'test' })).toEqual({ available: parseTon('10'), reserved: 0n });
  });

  test('a taken key raises the unique violation and leaves the balance as it was', async () => {
    expect(await placeInOneStatement(db.kysely, pending('1', 'same-key'), 10_000)).toBe(true);
    const error = await placeInOneStatement(db.kysely, pending('1', 'same-key'), 10_000).catch((e: unknown) => e);
    expect(db.engine.isUniqueViolation(error)).toBe(true);
    expect(await readBalance(db.kysely, { accountId, mode: 'test' })).toEqual({ available: parseTon('9'), reserved: parseTon('1') });
  });

  test('takes the key before the balance row, as the general path does: the same key on two nodes at once does not deadlock', async () => {
    // Another node's general path: its order row (the key) is in, its reservation not yet.
    const other = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
    await other.connect();
    try {
      const first = pending('1', 'both-nodes');
      await other.query('begin');
      await other.query(
        `insert into orders (id, account_id, mode, idempotency_key, fingerprint, product, recipient, quantity, amount, status, created_at, updated_at, next_run_at)
         values ($1, $2, 'test', 'both-nodes', '[]', 'stars', 'alice_test', 50, 1000000000, 'fulfillment_pending', 1, 1, 1)`,
        [first.id, accountId],
      );
      const second = placeInOneStatement(db.kysely, pending('1', 'both-nodes'), 10_000).catch((e: unknown) => e);
      await waitUntilBlocked(other);
      // The first node now reserves. Had the statement above locked the balance row first,
      // this update would wait for it while it waits for the key: a deadlock.
      await other.query(`update balances set available = available - 1000000000, reserved = reserved + 1000000000 where account_id = $1 and mode = 'test'`, [accountId]);
      await other.query('commit');
      expect(db.engine.isUniqueViolation(await second)).toBe(true);
    } finally {
      await other.end();
    }
    expect(await readBalance(db.kysely, { accountId, mode: 'test' })).toEqual({ available: parseTon('9'), reserved: parseTon('1') });
  });

  test('waits for a locked balance row no longer than the cap, then fails with the lock timeout', async () => {
    const holder = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`update balances set available = available where account_id = $1 and mode = 'test'`, [accountId]);
      const error = await placeInOneStatement(db.kysely, pending('1'), 200).catch((e: unknown) => e);
      expect(db.engine.isLockTimeout(error)).toBe(true);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    // The cap was the statement's own: the pooled connection keeps its default (no cap).
    const settings = await Promise.all(
      Array.from({ length: 3 }, () => db.kysely.selectNoFrom((eb) => eb.fn<string>('current_setting', [eb.val('lock_timeout')]).as('cap')).executeTakeFirstOrThrow()),
    );
    expect(settings.map((s) => s.cap)).toEqual(['0', '0', '0']);
  });

  test('announceQueued reaches the workers listening elsewhere (NOTIFY), after the commit it follows', async () => {
    const listener = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
    await listener.connect();
    const notified: string[] = [];
    listener.on('notification', (n) => notified.push(n.channel));
    try {
      await listener.query(`listen ${QUEUED_CHANNEL}`);
      expect(await placeInOneStatement(db.kysely, pending('1'), 10_000)).toBe(true);
      // The statement itself notifies no one: a NOTIFY in it would serialise commits.
      await listener.query('select 1');
      expect(notified).toEqual([]);
      await db.announceQueued!();
      // A round trip on the listener's connection delivers any notification sent before it.
      await listener.query('select 1');
      expect(notified).toEqual([QUEUED_CHANNEL]);
    } finally {
      await listener.end();
    }
  });
});
