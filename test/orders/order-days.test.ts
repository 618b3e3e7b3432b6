import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Mode } from '../../src/domain/api-key.js';
import { MS_PER_DAY } from '../../src/domain/time.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { availableAtDayEnds } from '../../src/ledger/balance-days.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { orderDays } from '../../src/orders/order-days.js';
import { type Transition, transitionMany, transitionOrder, withLedgerMovesLast } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * The daily rollups (migration 0018) against a recount from the rows they summarise: after any
 * mix of orders created on different days, delivered or failed one by one, in a worker's batch
 * or by two actors racing for the same order, with balance adjustments in both modes, order_days
 * equals a count of the final orders by day of creation, balance_days the journal's available
 * changes by day, and the balance at each day's end the sum of every movement dated before it.
 */
let fresh: FreshDatabase;
let db: Db;
beforeAll(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
});
afterAll(async () => {
  await db?.close();
  await fresh?.dispose();
});

const today = Math.floor(Date.now() / MS_PER_DAY);
const config = loadConfig({});
const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));

type Settle = 'single' | 'batch' | 'race' | 'raceBatch' | 'open';
interface Plan {
  orders: Array<{ day: number; quantity: number; outcome: 'delivered' | 'failed'; settle: Settle }>;
  adjustments: Array<{ day: number; mode: Mode; amount: bigint }>;
}

const plan: fc.Arbitrary<Plan> = fc.record({
  orders: fc.array(
    fc.record({
      day: fc.integer({ min: 0, max: 4 }),
      quantity: fc.integer({ min: 50, max: 500 }),
      outcome: fc.constantFrom('delivered' as const, 'failed' as const),
      settle: fc.constantFrom<Settle>('single', 'batch', 'race', 'raceBatch', 'open'),
    }),
    { maxLength: 10 },
  ),
  adjustments: fc.array(fc.record({ day: fc.integer({ min: 0, max: 40 }), mode: fc.constantFrom<Mode>('test', 'live'), amount: fc.bigInt({ min: 1n, max: 5_000_000_000n }) }), {
    maxLength: 4,
  }),
});

const at = (daysAgo: number, ms = 0) => (today - daysAgo) * MS_PER_DAY + 3_600_000 + ms;
const steps = (outcome: 'delivered' | 'failed', now: number): Transition[] => [
  { to: 'processing', nextRunAt: now, now },
  outcome === 'delivered' ? { to: 'delivered', nextRunAt: null, now } : { to: 'failed', failureReason: 'upstream_error', message: 'no', nextRunAt: null, now },
];

let run = 0;
async function apply(p: Plan): Promise<string> {
  const { accountId } = await createAccount(db, `days-${testEngine}-${run++}@example.com`);
  await adjustBalance(db, { accountId, mode: 'test', amount: 1_000_000_000_000n, reason: 'funding' }, at(45));
  for (const a of p.adjustments) await adjustBalance(db, { accountId, mode: a.mode, amount: a.amount, reason: 'adjust' }, at(a.day, 5));
  const orders: Array<{ order: Order; outcome: 'delivered' | 'failed'; settle: Settle }> = [];
  for (const [i, o] of p.orders.entries()) {
    const deps = { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: () => undefined, now: () => at(o.day, i) };
    const { order } = await createOrder(deps, {
      accountId,
      mode: 'test',
      idempotencyKey: `k${i}`,
      product: 'stars',
      username: 'alice_test',
      quantity: o.quantity,
      externalId: null,
    });
    orders.push({ order, outcome: o.outcome, settle: o.settle });
  }
  const settledNow = Date.now();
  const batch = orders.filter((o) => o.settle === 'batch' || o.settle === 'raceBatch');
  const work: Array<Promise<unknown>> = [];
  for (const { order, outcome, settle } of orders) {
    const [toProcessing, toFinal] = steps(outcome, settledNow);
    if (settle === 'single') work.push(transitionOrder(db.kysely, order, toProcessing!).then(() => transitionOrder(db.kysely, { ...order, status: 'processing' }, toFinal!)));
    if (settle === 'race') {
      // Two actors move the same processing order to opposite final statuses: one wins.
      await transitionOrder(db.kysely, order, toProcessing!);
      const moved = { ...order, status: 'processing' as const };
      const [other] = steps(outcome === 'delivered' ? 'failed' : 'delivered', settledNow).slice(1);
      work.push(transitionOrder(db.kysely, moved, toFinal!), transitionOrder(db.kysely, moved, other!));
    }
    // Raced by the operator failing it while the batch runs.
    if (settle === 'raceBatch') work.push(transitionOrder(db.kysely, order, { to: 'failed', failureReason: 'operator_failed', nextRunAt: null, now: settledNow }));
  }
  work.push(
    db.kysely.transaction().execute((tx) =>
      withLedgerMovesLast(tx, () =>
        transitionMany(
          tx,
          batch.map(({ order, outcome }) => ({ order, steps: steps(outcome, settledNow) })),
        ),
      ),
    ),
  );
  await Promise.all(work);
  return accountId;
}

async function recount(accountId: string) {
  const day = sql.lit(MS_PER_DAY);
  const orders = await sql<{ day: unknown; status: string; n: unknown; amount: unknown }>`
    select created_at / ${day} as day, status, count(*) as n, sum(amount) as amount from orders
     where account_id = ${accountId} and mode = 'test' and status in ('delivered', 'failed') group by created_at / ${day}, status`.execute(db.kysely);
  const counted = new Map<number, { delivered: number; deliveredAmount: bigint; failed: number; failedAmount: bigint }>();
  for (const row of orders.rows) {
    const entry = counted.get(Number(row.day)) ?? { delivered: 0, deliveredAmount: 0n, failed: 0, failedAmount: 0n };
    if (row.status === 'delivered') Object.assign(entry, { delivered: Number(row.n), deliveredAmount: BigInt(String(row.amount)) });
    else Object.assign(entry, { failed: Number(row.n), failedAmount: BigInt(String(row.amount)) });
    counted.set(Number(row.day), entry);
  }
  return counted;
}

/** The available balance at the end of each day, summed from the journal itself. */
async function journalDayEnds(accountId: string, mode: Mode, first: number, count: number): Promise<bigint[]> {
  const rows = await db.kysely.selectFrom('journal').select(['created_at', 'available_delta']).where('account_id', '=', accountId).where('mode', '=', mode).execute();
  return Array.from({ length: count }, (_, i) => rows.filter((r) => Number(r.created_at) < (first + i + 1) * MS_PER_DAY).reduce((sum, r) => sum + BigInt(r.available_delta), 0n));
}

test(`order_days and balance_days equal a recount after delivered, failed, batched and racing orders (${testEngine})`, async () => {
  await fc.assert(
    fc.asyncProperty(plan, async (p) => {
      const accountId = await apply(p);
      const first = today - 49;
      const rolled = await orderDays(db.kysely, { accountId, mode: 'test' }, first, today + 1);
      const counted = await recount(accountId);
      expect(new Map(rolled.map(({ day, ...rest }) => [day, rest]))).toEqual(counted);
      for (const mode of ['test', 'live'] as const) {
        expect(await availableAtDayEnds(db.kysely, { accountId, mode }, first, 51)).toEqual(await journalDayEnds(accountId, mode, first, 51));
      }
      // Every order the plan settled counts once, whoever won its race.
      const finals = [...counted.values()].reduce((n, d) => n + d.delivered + d.failed, 0);
      expect(finals).toBe(p.orders.filter((o) => o.settle !== 'open').length);
    }),
    { numRuns: 25, endOnFailure: true },
  );
  expect(await verifyLedger(db.kysely)).toEqual([]);
});
