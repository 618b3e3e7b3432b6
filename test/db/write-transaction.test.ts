import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { parseTon } from '../../src/domain/money.js';
import type { Db } from '../../src/db/engine.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { openDatabase } from '../../src/db/open.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { move, readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createOrder, type CreateOrderDeps } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import { findOrder, listEvents } from '../../src/orders/order-store.js';
import { testFulfilmentStep } from '../../src/orders/test-fulfilment.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { FulfilmentWorker } from '../../src/workers/fulfilment-worker.js';
import { loadConfig } from '../../src/config.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * Db.writeTransaction (group commit on SQLite) and the worker's transactional batches: units
 * of work that share a commit still succeed or fail one by one, and nothing is answered
 * before it is committed.
 */
let fresh: FreshDatabase;
let db: Db;
let other: Db;
let accountId: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  other = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  accountId = (await createAccount(db, 'group@example.com')).accountId;
  await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('1'), reason: 'test funding' });
});

afterEach(async () => {
  await db.close();
  await other.close();
  await fresh.dispose();
});

const ref = () => ({ accountId, mode: 'test' as const });

describe(`writeTransaction (${testEngine})`, () => {
  test('concurrent units commit independently: a failing unit leaves nothing, the others all land', async () => {
    const units = Array.from({ length: 20 }, (_, i) =>
      db.writeTransaction(async (tx) => {
        if (!(await move(tx, ref(), { kind: 'reserve', amount: parseTon('0.01'), now: Date.now() }))) throw new Error('no funds');
        if (i % 4 === 3) throw new Error(`unit ${i} fails after writing`);
        return i;
      }),
    );
    const settled = await Promise.allSettled(units);
    const failed = settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason.message);
    expect(failed).toEqual([
      'unit 3 fails after writing',
      'unit 7 fails after writing',
      'unit 11 fails after writing',
      'unit 15 fails after writing',
      'unit 19 fails after writing',
    ]);
    // Read through another connection: what was answered is committed.
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('0.85'), reserved: parseTon('0.15') });
    const journal = await other.kysely.selectFrom('journal').select(sql<number>`count(*)`.as('n')).where('kind', '=', 'reserve').executeTakeFirstOrThrow();
    expect(Number(journal.n)).toBe(15);
  });

  test('a unit sees the writes of units committed before it in the same batch', async () => {
    const results = await Promise.all(
      Array.from({ length: 150 }, () => db.writeTransaction(async (tx) => move(tx, ref(), { kind: 'reserve', amount: parseTon('0.01'), now: Date.now() }))),
    );
    // 1 TON covers exactly 100 reservations of 0.01: the rest are refused, never overdrawn.
    expect(results.filter(Boolean)).toHaveLength(100);
    expect(await readBalance(other.kysely, ref())).toEqual({ available: 0n, reserved: parseTon('1') });
  });

  test('orders created concurrently, then fulfilled in batches by the worker, keep the ledger exact', async () => {
    const prices = new ListPriceSource(loadConfig({}).prices, new FixedRateFeed(loadConfig({}).tonUsdRate));
    const deps: CreateOrderDeps = { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: () => undefined };
    const created = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        createOrder(deps, { accountId, mode: 'test', idempotencyKey: `k${i}`, product: 'stars', username: i === 2 ? 'test_failed' : 'someone', quantity: 50, externalId: null }),
      ),
    );
    // 50 stars cost 0.25 TON: four fit in 1 TON, the other two are refused with nothing reserved.
    expect(created.filter((c) => c.status === 'fulfilled')).toHaveLength(4);
    const worker = new FulfilmentWorker({
      db,
      logger: pino({ level: 'silent' }),
      steps: {},
      transactionalSteps: { test: testFulfilmentStep({ delayMs: 0, slowDelayMs: 0 }) },
    });
    // With no delay, one round takes each order pending → processing → final in one batch.
    expect(await worker.runOnce(Date.now() + 1)).toBe(4);
    expect(await worker.runOnce(Date.now() + 2)).toBe(0);
    for (const c of created) {
      if (c.status !== 'fulfilled') continue;
      const order = await findOrder(other.kysely, c.value.order.id, { accountId, mode: 'test' });
      const events = (await listEvents(other.kysely, c.value.order.id)).map((e) => e.type);
      expect(events).toEqual(['order.created', 'order.processing', order?.recipient === 'test_failed' ? 'order.failed' : 'order.delivered']);
    }
    expect(await verifyLedger(other.kysely)).toEqual([]);
  });

  test('a worker settles at most 10 orders per transaction of its own on PostgreSQL (balance rows stay locked to the commit), its whole batch on SQLite', async () => {
    await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('2'), reason: 'test funding' });
    const prices = new ListPriceSource(loadConfig({}).prices, new FixedRateFeed(loadConfig({}).tonUsdRate));
    const deps: CreateOrderDeps = { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: () => undefined };
    for (let i = 0; i < 12; i++) {
      await createOrder(deps, { accountId, mode: 'test', idempotencyKey: `b${i}`, product: 'stars', username: 'someone', quantity: 50, externalId: null });
    }
    const worker = new FulfilmentWorker({
      db,
      logger: pino({ level: 'silent' }),
      steps: {},
      transactionalSteps: { test: testFulfilmentStep({ delayMs: 0, slowDelayMs: 0 }) },
    });
    const first = await worker.runOnce(Date.now() + 1);
    expect(first).toBe(testEngine === 'postgres' ? 10 : 12);
    expect(first + (await worker.runOnce(Date.now() + 2))).toBe(12);
    // 12 orders of 0.25 TON delivered out of 3 TON.
    expect(await readBalance(other.kysely, ref())).toEqual({ available: 0n, reserved: 0n });
    expect(await verifyLedger(other.kysely)).toEqual([]);
  });

  test('a step that throws is set aside without holding back the rest of its batch', async () => {
    const prices = new ListPriceSource(loadConfig({}).prices, new FixedRateFeed(loadConfig({}).tonUsdRate));
    const deps: CreateOrderDeps = { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: () => undefined };
    const orders = [];
    for (let i = 0; i < 3; i++) {
      orders.push((await createOrder(deps, { accountId, mode: 'test', idempotencyKey: `s${i}`, product: 'stars', username: `user_${i}x`, quantity: 50, externalId: null })).order);
    }
    const poisoned = orders[1]!.id;
    const step = testFulfilmentStep({ delayMs: 0, slowDelayMs: 0 });
    const worker = new FulfilmentWorker({
      db,
      logger: pino({ level: 'silent' }),
      steps: {},
      retryAfterErrorMs: 60_000,
      transactionalSteps: {
        test: async (tx, batch, now) => {
          if (batch.some((order) => order.id === poisoned)) throw new Error('a bug in one step');
          return step(tx, batch, now);
        },
      },
    });
    await worker.runOnce(Date.now() + 1);
    const statuses = await Promise.all(orders.map(async (o) => (await findOrder(other.kysely, o.id, { accountId, mode: 'test' }))?.status));
    // One order per transaction after the failure: the others go on through both of their steps.
    expect(statuses).toEqual(['delivered', 'fulfillment_pending', 'delivered']);
    // The poisoned order is retried only after the pause, not in a hot loop.
    const row = await other.kysely.selectFrom('orders').select('next_run_at').where('id', '=', poisoned).executeTakeFirstOrThrow();
    expect(Number(row.next_run_at)).toBeGreaterThan(Date.now() + 50_000);
  });
});

describe.skipIf(testEngine !== 'sqlite')('group commit batches (SQLite)', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  test('a batch waits, turn by turn, until it is as large as the last one, then commits them all at once', async () => {
    // A linger far longer than the test: the batch closes on its size, never on the clock.
    const group = new GroupCommit(db.kysely, 60_000);
    await group.run(async () => 'alone'); // the first batch, of 1, does not wait
    expect(group.commits).toBe(1);
    await Promise.all(Array.from({ length: 8 }, (_, i) => group.run(async () => i)));
    expect(group.commits).toBe(2);
    // The next eight arrive one turn of the event loop apart, as requests do under load.
    const late: Array<Promise<number>> = [];
    for (let i = 0; i < 8; i++) {
      late.push(group.run(async (tx) => ((await move(tx, ref(), { kind: 'reserve', amount: parseTon('0.01'), now: Date.now() })) ? i : -1)));
      await nextTurn();
    }
    expect(await Promise.all(late)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(group.commits).toBe(3);
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('0.92'), reserved: parseTon('0.08') });
  });

  test('a batch smaller than the last one commits when the linger runs out', async () => {
    const group = new GroupCommit(db.kysely, 0);
    await Promise.all(Array.from({ length: 8 }, (_, i) => group.run(async () => i)));
    expect(await group.run(async () => 'after')).toBe('after');
    expect(group.commits).toBe(2);
  });

  test('the finisher writes in every batch, after its units and in the same commit; its failure leaves the units committed', async () => {
    const group = new GroupCommit(db.kysely, 0);
    const seen: number[] = [];
    let afterCommit = 0;
    group.setFinisher(async (tx) => {
      // It sees the batch's units: the reservations made just before it.
      seen.push(Number((await tx.selectFrom('journal').select(sql<number>`count(*)`.as('n')).where('kind', '=', 'reserve').executeTakeFirstOrThrow()).n));
      await move(tx, ref(), { kind: 'reserve', amount: parseTon('0.5'), now: Date.now() });
      return () => afterCommit++;
    });
    const reserve = () => group.run(async (tx) => move(tx, ref(), { kind: 'reserve', amount: parseTon('0.01'), now: Date.now() }));
    expect(await Promise.all([reserve(), reserve(), reserve()])).toEqual([true, true, true]);
    expect(group.commits).toBe(1);
    expect(seen).toEqual([3]);
    expect(afterCommit).toBe(1);
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('0.47'), reserved: parseTon('0.53') });
    group.setFinisher(async (tx) => {
      await move(tx, ref(), { kind: 'reserve', amount: parseTon('0.1'), now: Date.now() });
      throw new Error('a bug in the finisher');
    });
    expect(await reserve()).toBe(true);
    // The unit's reservation landed; the finisher's was rolled back with its savepoint.
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('0.46'), reserved: parseTon('0.54') });
  });

  test('a full disk mid-batch fails every unit with an unavailable error, keeps nothing of it and leaves the connection usable', async () => {
    // SQLite rolls the whole transaction back on SQLITE_FULL, even for a statement in a
    // savepoint. A unit that swallows the error and writes on must not write outside it.
    await sql`create table filler (x blob)`.execute(db.kysely);
    const pages = Number((await sql<{ page_count: bigint }>`pragma page_count`.execute(db.kysely)).rows[0]?.page_count);
    await sql.raw(`pragma max_page_count = ${pages + 4}`).execute(db.kysely);
    const group = new GroupCommit(db.kysely, 0);
    const reserve = (tx: Parameters<Parameters<typeof group.run>[0]>[0], ton: string) => move(tx, ref(), { kind: 'reserve', amount: parseTon(ton), now: Date.now() });
    let wroteOn = false;
    const settled = await Promise.allSettled([
      group.run((tx) => reserve(tx, '0.01')),
      group.run(async (tx) => {
        await sql`insert into filler values (randomblob(200000))`.execute(tx).catch(() => undefined);
        await reserve(tx, '0.02');
        wroteOn = true;
      }),
      group.run((tx) => reserve(tx, '0.03')),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const s of settled) expect(db.engine.isUnavailable((s as PromiseRejectedResult).reason), String((s as PromiseRejectedResult).reason)).toBe(true);
    expect(wroteOn).toBe(false);
    expect(group.commits).toBe(0);
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('1'), reserved: 0n });
    // Space back: the same connection writes again.
    await sql.raw('pragma max_page_count = 1073741823').execute(db.kysely);
    expect(await group.run((tx) => reserve(tx, '0.04'))).toBe(true);
    expect(await readBalance(other.kysely, ref())).toEqual({ available: parseTon('0.96'), reserved: parseTon('0.04') });
    expect((await sql`pragma integrity_check`.execute(db.kysely)).rows).toEqual([{ integrity_check: 'ok' }]);
  });

  test('with the worker as finisher, new test orders leave their creating commit already final (no delay configured)', async () => {
    const worker = new FulfilmentWorker({ db, logger: pino({ level: 'silent' }), steps: {}, transactionalSteps: { test: testFulfilmentStep({ delayMs: 0, slowDelayMs: 0 }) } });
    const group = new GroupCommit(db.kysely, 0);
    group.setFinisher((tx) => worker.stepDueIn(tx));
    const prices = new ListPriceSource(loadConfig({}).prices, new FixedRateFeed(loadConfig({}).tonUsdRate));
    const deps: CreateOrderDeps = {
      db: { ...db, writeTransaction: (work) => group.run(work) },
      prices,
      gate: new IdempotencyGate(),
      liveAvailable: () => false,
      onCreated: () => undefined,
    };
    const create = (key: string, username: string) =>
      createOrder(deps, { accountId, mode: 'test', idempotencyKey: key, product: 'stars', username, quantity: 50, externalId: null });
    // A worker that is not running takes nothing: the order waits for its rounds.
    const waiting = (await create('w', 'someone')).order;
    expect((await findOrder(other.kysely, waiting.id, ref()))?.status).toBe('fulfillment_pending');
    worker.start();
    try {
      const [a, b] = await Promise.all([create('a', 'someone'), create('b', 'test_failed')]);
      // Read through another connection right after the answers: already committed, final.
      for (const [order, final] of [
        [a.order, 'order.delivered'],
        [b.order, 'order.failed'],
      ] as const) {
        expect((await listEvents(other.kysely, order.id)).map((e) => e.type)).toEqual(['order.created', 'order.processing', final]);
      }
      expect(await verifyLedger(other.kysely)).toEqual([]);
    } finally {
      await worker.stop();
    }
  });
});
