import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { createOrder, type CreateOrderDeps } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { FulfilmentWorker } from '../../src/workers/fulfilment-worker.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { pollUntil } from '../support/http.js';

/**
 * FulfilmentWorker.stop() gives back at once the leases of the orders it claimed but has not
 * started, so that another worker takes them while this one finishes the step under way
 * (docs/operations.md "Graceful shutdown").
 */
let fresh: FreshDatabase;
let db: Db;
let accountId: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  accountId = (await createAccount(db, 'stop@example.com')).accountId;
  await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('10'), reason: 'test funding' });
});

afterEach(async () => {
  await db.close();
  await fresh.dispose();
});

async function createOrders(count: number): Promise<string[]> {
  const config = loadConfig({});
  const deps: CreateOrderDeps = {
    db,
    prices: new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate)),
    gate: new IdempotencyGate(),
    liveAvailable: () => false,
    onCreated: () => undefined,
  };
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await createOrder(deps, { accountId, mode: 'test', idempotencyKey: `stop-${i}`, product: 'stars', username: 'someone', quantity: 50, externalId: null })).order.id);
  }
  return ids;
}

const leases = async () => Object.fromEntries((await db.kysely.selectFrom('orders').select(['id', 'lease_owner']).execute()).map((row) => [row.id, row.lease_owner]));

describe(`FulfilmentWorker.stop (${testEngine})`, () => {
  test('gives back the leases of claimed orders not started at once, and the rest when their step ends', async () => {
    const ids = await createOrders(4);
    const started: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Leased steps, one at a time: the first blocks until released, leaving three claimed and waiting.
    const worker = new FulfilmentWorker({
      db,
      logger: pino({ level: 'silent' }),
      leaseMs: 60_000,
      concurrency: 1,
      steps: {
        test: async (order) => {
          started.push(order.id);
          await blocked;
          return undefined;
        },
      },
    });
    worker.start();
    await pollUntil(
      async () => started.length,
      (n) => n === 1,
      { what: 'the first step to start' },
    );
    const claimed = await leases();
    expect(Object.values(claimed).filter((owner) => owner === worker.id)).toHaveLength(4);

    const stopping = worker.stop();
    const [running] = started;
    const waiting = ids.filter((id) => id !== running);
    // The three that never started are free for another worker while the first still runs.
    const during = await pollUntil(leases, (now) => waiting.every((id) => now[id] === null), { what: 'the waiting orders’ leases to be given back' });
    expect(during[running as string]).toBe(worker.id);
    const other = new FulfilmentWorker({ db, logger: pino({ level: 'silent' }), steps: { test: async () => undefined } });
    expect(await other.runOnce()).toBe(3);

    release();
    await stopping;
    expect(started).toEqual([running]);
    const after = await leases();
    expect(after[running as string]).toBeNull();
  });

  test('a worker started again after stop() takes new orders (the test harness pauses it this way)', async () => {
    const started: string[] = [];
    const worker = new FulfilmentWorker({
      db,
      logger: pino({ level: 'silent' }),
      steps: {
        test: async (order) => {
          started.push(order.id);
          return undefined;
        },
      },
    });
    worker.start();
    await worker.stop();
    worker.start();
    try {
      const [id] = await createOrders(1);
      worker.wake();
      await pollUntil(
        async () => started,
        (ids) => ids.includes(id as string),
        { what: 'the restarted worker to run the new order' },
      );
    } finally {
      await worker.stop();
    }
  });
});
