import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { parseTon } from '../../src/domain/money.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { findOrderById, listEvents } from '../../src/orders/order-store.js';
import { type Transition, transitionMany, withLedgerMovesLast } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * A worker's batch of transitions written together (a few statements for the whole batch):
 * the same orders, events, ledger moves and webhook messages as transitionOrder one by one.
 */
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

async function fundedAccount(email: string): Promise<string> {
  const { accountId } = await createAccount(db, email);
  await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('100'), reason: 'test funding' });
  return accountId;
}

async function newOrder(accountId: string, key: string): Promise<Order> {
  const config = loadConfig({});
  const deps = {
    db,
    prices: new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate)),
    gate: new IdempotencyGate(),
    liveAvailable: () => false,
    onCreated: () => undefined,
  };
  return (await createOrder(deps, { accountId, mode: 'test', idempotencyKey: key, product: 'stars', username: 'alice_test', quantity: 50, externalId: null })).order;
}

const now = Date.now();
const toDelivered: Transition[] = [
  { to: 'processing', nextRunAt: now, now },
  { to: 'delivered', nextRunAt: null, now },
];
const toFailed: Transition[] = [
  { to: 'processing', nextRunAt: now, now },
  { to: 'failed', failureReason: 'upstream_error', message: 'rejected', nextRunAt: null, now },
];

test(`chains of several orders: final statuses, every step's event in order, one settlement each (${testEngine})`, async () => {
  const accountId = await fundedAccount('many@example.com');
  const [a, b, c] = [await newOrder(accountId, 'a'), await newOrder(accountId, 'b'), await newOrder(accountId, 'c')];
  const slow: Transition[] = [{ to: 'processing', nextRunAt: now + 60_000, now }];
  const statuses = await db.kysely.transaction().execute((tx) =>
    withLedgerMovesLast(tx, () =>
      transitionMany(tx, [
        { order: a!, steps: toDelivered },
        { order: b!, steps: toFailed },
        { order: c!, steps: slow },
      ]),
    ),
  );
  expect(Object.fromEntries(statuses)).toEqual({ [a!.id]: 'delivered', [b!.id]: 'failed', [c!.id]: 'processing' });
  expect(await findOrderById(db.kysely, b!.id)).toMatchObject({ status: 'failed', failureReason: 'upstream_error', nextRunAt: null, updatedAt: now });
  expect(await findOrderById(db.kysely, c!.id)).toMatchObject({ status: 'processing', nextRunAt: now + 60_000 });
  const events = async (order: Order) => (await listEvents(db.kysely, order.id)).map((e) => [e.seq, e.type, e.status, e.data]);
  const amount = '0.25';
  expect(await events(a!)).toEqual([
    [1, 'order.created', 'fulfillment_pending', { amount }],
    [2, 'order.processing', 'processing', {}],
    [3, 'order.delivered', 'delivered', { amount }],
  ]);
  expect(await events(b!)).toEqual([
    [1, 'order.created', 'fulfillment_pending', { amount }],
    [2, 'order.processing', 'processing', {}],
    [3, 'order.failed', 'failed', { reason: 'upstream_error', message: 'rejected', amount }],
  ]);
  expect((await events(c!)).map(([seq, type]) => [seq, type])).toEqual([
    [1, 'order.created'],
    [2, 'order.processing'],
  ]);
  const settled = await db.kysely.selectFrom('journal').select(['order_id', 'kind']).where('kind', 'in', ['debit', 'release']).orderBy('seq').execute();
  expect(settled).toEqual([
    { order_id: a!.id, kind: 'debit' },
    { order_id: b!.id, kind: 'release' },
  ]);
  expect(await verifyLedger(db.kysely)).toEqual([]);
});

test(`an order another actor moved first is left alone: no status, no event, no settlement (${testEngine})`, async () => {
  const accountId = await fundedAccount('moved@example.com');
  const [a, b] = [await newOrder(accountId, 'a'), await newOrder(accountId, 'b')];
  // The operator failed b after the worker read it as pending.
  await db.kysely.updateTable('orders').set({ status: 'processing' }).where('id', '=', b!.id).execute();
  const statuses = await db.kysely.transaction().execute((tx) =>
    transitionMany(tx, [
      { order: a!, steps: toDelivered },
      { order: b!, steps: toDelivered },
    ]),
  );
  expect([...statuses.keys()]).toEqual([a!.id]);
  expect((await listEvents(db.kysely, b!.id)).map((e) => e.type)).toEqual(['order.created']);
  expect(await db.kysely.selectFrom('journal').select('kind').where('order_id', '=', b!.id).execute()).toEqual([{ kind: 'reserve' }]);
});

test(`an account with a webhook endpoint gets a message per step, each snapshotting the order as that step left it (${testEngine})`, async () => {
  const hooked = await fundedAccount('hooked@example.com');
  const quiet = await fundedAccount('quiet@example.com');
  await db.kysely
    .insertInto('webhook_endpoints')
    .values({
      id: 'we_many',
      account_id: hooked,
      mode: 'test',
      url: 'https://example.com/hook',
      events: '["*"]',
      secret: 'whsec_x',
      status: 'enabled',
      created_at: 1,
      updated_at: 1,
    })
    .execute();
  const [h, q] = [await newOrder(hooked, 'h'), await newOrder(quiet, 'q')];
  const before = await db.kysely.selectFrom('webhook_messages').select('id').execute();
  const statuses = await db.kysely.transaction().execute((tx) =>
    transitionMany(tx, [
      { order: h!, steps: toDelivered },
      { order: q!, steps: toDelivered },
    ]),
  );
  expect(Object.fromEntries(statuses)).toEqual({ [h!.id]: 'delivered', [q!.id]: 'delivered' });
  const messages = await db.kysely
    .selectFrom('webhook_messages')
    .select(['event_type', 'payload'])
    .where('id', 'not in', before.length ? before.map((m) => m.id) : ['-'])
    .orderBy('created_at')
    .orderBy('event_type', 'desc')
    .execute();
  expect(messages.map((m) => [m.event_type, JSON.parse(m.payload).data.order.status])).toEqual([
    ['order.processing', 'processing'],
    ['order.delivered', 'delivered'],
  ]);
  expect((await listEvents(db.kysely, q!.id)).map((e) => e.type)).toEqual(['order.created', 'order.processing', 'order.delivered']);
  expect(await verifyLedger(db.kysely)).toEqual([]);
});
