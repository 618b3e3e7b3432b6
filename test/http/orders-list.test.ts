import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Mode } from '../../src/domain/api-key.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import { orderPageQuery } from '../../src/orders/list-orders.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, expectError, expectOk, newKey, ORDER_ID, postOrder, quiesce, seedLiveOrder, STARS_50 } from '../support/http.js';

/** GET /orders: Stripe-style cursor list of the key's account and mode, with filters. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const list = (key: string, query = '') => call(h, { path: `/orders${query}`, key });

async function newOrder(key: string, body: Record<string, unknown> = STARS_50): Promise<string> {
  const res = await postOrder(h, key, body);
  expectOk(res, 201);
  return res.body.id;
}

/** An order created at a chosen time, through the service's own creation code (ties, time ranges). */
async function orderAt(account: TestAccount, at: number, extra: { externalId?: string; username?: string } = {}, mode: Mode = 'test'): Promise<string> {
  const deps = {
    db: h.service.db,
    prices: { priceNanotons: async () => 250_000_000n },
    gate: new IdempotencyGate(),
    liveAvailable: () => true,
    onCreated: () => h.service.worker?.wake(),
    now: () => at,
  };
  const result = await createOrder(deps, {
    accountId: account.accountId,
    mode,
    idempotencyKey: newKey(),
    product: 'stars',
    username: extra.username ?? 'durov',
    quantity: 50,
    externalId: extra.externalId ?? null,
  });
  return result.order.id;
}

/** Walks every page with `starting_after`, calling `between` after each page. */
async function walk(key: string, query: string, between: () => Promise<unknown> = async () => undefined) {
  const seen: { id: string; created_at: string }[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await list(key, `?${query}${cursor ? `&starting_after=${cursor}` : ''}`);
    expectOk(res);
    expect(res.body.object).toBe('list');
    seen.push(...res.body.data);
    if (!res.body.has_more) return seen;
    cursor = res.body.data[res.body.data.length - 1].id;
    await between();
  }
  throw new Error('too many pages');
}

describe('pagination', () => {
  test('walks every order exactly once, newest first, while new orders arrive (ties included)', async () => {
    const a = await h.account({ test: '100' });
    // Six orders in the same millisecond: only the id orders them.
    const tie = Date.now() - 60_000;
    const initial: string[] = [];
    for (let i = 0; i < 6; i++) initial.push(await orderAt(a, tie));
    for (let i = 0; i < 11; i++) initial.push(await newOrder(a.testKey));
    const arrived: string[] = [];
    const seen = await walk(a.testKey, 'limit=4', async () => {
      arrived.push(await newOrder(a.testKey), await newOrder(a.testKey));
    });
    const ids = seen.map((o) => o.id);
    expect(new Set(ids).size, 'no order twice').toBe(ids.length);
    expect([...ids].sort()).toEqual([...initial].sort());
    for (let i = 1; i < seen.length; i++) {
      expect(Date.parse(seen[i - 1]!.created_at)).toBeGreaterThanOrEqual(Date.parse(seen[i]!.created_at));
    }
    // The orders that arrived meanwhile are all at the top of a new walk.
    const fresh = await walk(a.testKey, 'limit=100');
    expect(
      fresh
        .slice(0, arrived.length)
        .map((o) => o.id)
        .sort(),
    ).toEqual([...arrived].sort());
    expect(fresh).toHaveLength(initial.length + arrived.length);
  });

  test('ending_before pages back to exactly the page before; items are orders without events', async () => {
    const a = await h.account({ test: '100' });
    for (let i = 0; i < 7; i++) await newOrder(a.testKey, { ...STARS_50, external_id: `inv-${i}` });
    const first = await list(a.testKey, '?limit=3');
    expect(first.body.has_more).toBe(true);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.data[0]).not.toHaveProperty('events');
    expect(first.body.data[0]).not.toHaveProperty('ok');
    expect(first.body.data[0].id).toMatch(ORDER_ID);
    expect(first.body.data.map((o: { external_id: string }) => o.external_id)).toEqual(['inv-6', 'inv-5', 'inv-4']);
    const second = await list(a.testKey, `?limit=3&starting_after=${first.body.data[2].id}`);
    expect(second.body.data.map((o: { external_id: string }) => o.external_id)).toEqual(['inv-3', 'inv-2', 'inv-1']);
    const back = await list(a.testKey, `?limit=3&ending_before=${second.body.data[0].id}`);
    expect(back.body.data.map((o: { id: string }) => o.id)).toEqual(first.body.data.map((o: { id: string }) => o.id));
    expect(back.body.has_more, 'nothing newer than the first page').toBe(false);
    const last = await list(a.testKey, `?limit=3&starting_after=${second.body.data[2].id}`);
    expect(last.body).toMatchObject({ has_more: false });
    expect(last.body.data.map((o: { external_id: string }) => o.external_id)).toEqual(['inv-0']);
    const defaults = await list(a.testKey);
    expect(defaults.body.data).toHaveLength(7);
    expect(defaults.body.has_more).toBe(false);
  });

  test('the default limit is 20 and the maximum 100', async () => {
    const a = await h.account({ test: '100' });
    for (let i = 0; i < 21; i++) await orderAt(a, 1_700_000_000_000 + i);
    const page = await list(a.testKey);
    expect(page.body.data).toHaveLength(20);
    expect(page.body.has_more).toBe(true);
    const all = await list(a.testKey, '?limit=100');
    expect(all.body.data).toHaveLength(21);
    expect(all.body.has_more).toBe(false);
    const one = await list(a.testKey, '?limit=1');
    expect(one.body.data).toHaveLength(1);
  });
});

describe('scope and filters', () => {
  test('only the key’s account and mode', async () => {
    const a = await h.account({ test: '100', live: '10' });
    const other = await h.account({ test: '100' });
    const mine = await newOrder(a.testKey);
    const theirs = await newOrder(other.testKey);
    const live = (await seedLiveOrder(h, a.accountId, { idempotencyKey: newKey(), product: 'stars', username: 'durov', quantity: 50 })).order.id;
    expect((await list(a.testKey)).body.data.map((o: { id: string }) => o.id)).toEqual([mine]);
    expect((await list(a.liveKey)).body.data.map((o: { id: string }) => o.id)).toEqual([live]);
    // Another account's order, or the other mode's, is no cursor here.
    expectError(await list(a.testKey, `?starting_after=${theirs}`), 400, 'invalid_request', 'starting_after');
    expectError(await list(a.testKey, `?starting_after=${live}`), 400, 'invalid_request', 'starting_after');
    expectError(await list(a.testKey, `?ending_before=${theirs}`), 400, 'invalid_request', 'ending_before');
    expectError(await list(a.testKey, '?starting_after=ord_nosuchorder000000000'), 400, 'invalid_request', 'starting_after');
    expectError(await list(a.testKey, '?starting_after=%00'), 400, 'invalid_request', 'starting_after');
  });

  test('status, external_id and created[gte]/created[lt] combine', async () => {
    const a = await h.account({ test: '100' });
    const t0 = Date.UTC(2026, 0, 10, 12, 0, 0);
    const early = await orderAt(a, t0, { externalId: 'shop-1' });
    const failedEarly = await orderAt(a, t0 + 1000, { externalId: 'shop-1', username: 'test_failed' });
    const failedLate = await orderAt(a, t0 + 2000, { externalId: 'shop-1', username: 'test_failed' });
    const lateOther = await orderAt(a, t0 + 3000, { externalId: 'shop-2' });
    await quiesce(h);
    const ids = async (query: string) => {
      const res = await list(a.testKey, query);
      expectOk(res);
      return res.body.data.map((o: { id: string }) => o.id);
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await ids('?status=failed')).toEqual([failedLate, failedEarly]);
    expect(await ids('?status=delivered')).toEqual([lateOther, early]);
    expect(await ids('?external_id=shop-1')).toEqual([failedLate, failedEarly, early]);
    expect(await ids('?external_id=shop-1&status=delivered')).toEqual([early]);
    expect(await ids(`?created[gte]=${iso(t0 + 1000)}&created[lt]=${iso(t0 + 3000)}`)).toEqual([failedLate, failedEarly]);
    expect(await ids(`?created%5Bgte%5D=${iso(t0 + 1000)}&created%5Blt%5D=${iso(t0 + 3000)}&status=failed&external_id=shop-1&limit=1`)).toEqual([failedLate]);
    // Unix seconds, and other offsets: the same instants.
    expect(await ids(`?created[gte]=${(t0 + 2000) / 1000}`)).toEqual([lateOther, failedLate]);
    expect(await ids(`?created[lt]=2026-01-10T13:00:01%2B01:00`)).toEqual([early]);
    expect(await ids(`?created[gte]=2026-01-10T12:00:00.000000001Z`)).toEqual([lateOther, failedLate, failedEarly]);
    expect(await ids('?external_id=nope')).toEqual([]);
  });
});

describe('bad queries answer 400 invalid_request naming the parameter', () => {
  test.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=50.0', 'limit'],
    ['?limit=1e2', 'limit'],
    ['?limit=%2B50', 'limit'],
    ['?limit=', 'limit'],
    ['?limit=99999999999999999999', 'limit'],
    ['?limit=5&limit=6', 'limit'],
    ['?status=done', 'status'],
    ['?status=failed&status=delivered', 'status'],
    ['?external_id=', 'external_id'],
    [`?external_id=${'x'.repeat(129)}`, 'external_id'],
    // No external_id can hold a NUL (and PostgreSQL would refuse one as a parameter).
    ['?external_id=%00', 'external_id'],
    ['?external_id=inv%00-1', 'external_id'],
    ['?created[gte]=yesterday', 'created[gte]'],
    ['?created[gte]=2026-02-30T00:00:00Z', 'created[gte]'],
    ['?created[lt]=2026-01-10T12:00:00', 'created[lt]'],
    ['?created[lt]=2026-01-10', 'created[lt]'],
    ['?created[lt]=-5', 'created[lt]'],
    ['?starting_after=ord_a&ending_before=ord_b', 'ending_before'],
  ])('%s → param %s', async (query, param) => {
    const a = await h.account({ test: '1' });
    expectError(await list(a.testKey, query), 400, 'invalid_request', param);
  });

  test('unknown parameters are ignored; no key is 401', async () => {
    const a = await h.account({ test: '1' });
    expectOk(await list(a.testKey, '?expand=data&foo=1'));
    expectError(await call(h, { path: '/orders' }), 401, 'missing_api_key');
  });
});

describe('every filter is an index range (no table scan)', () => {
  // Each filter has its own index, so that it is a range of that index and not a filter over
  // every order of the account (`orders_list` alone would still be an index search). SQLite's
  // planner, without statistics, must choose it.
  const queries = {
    plain: { filters: {}, index: 'orders_list' },
    status: { filters: { status: 'failed' as const }, index: 'orders_list_status' },
    external_id: { filters: { externalId: 'shop-1' }, index: 'orders_list_external_id' },
    created: { filters: { createdGte: 1, createdLt: 2 }, index: 'orders_list' },
    all: { filters: { status: 'failed' as const, externalId: 'x', createdGte: 1, createdLt: 2 }, index: 'orders_list_(status|external_id)' },
    cursor: { filters: { startingAfter: { createdAt: 5, id: 'ord_x' } }, index: 'orders_list' },
    backwards: { filters: { status: 'delivered' as const, endingBefore: { createdAt: 5, id: 'ord_x' } }, index: 'orders_list_status' },
    // The dashboard's search box: an order id or an external_id, on a page of its list.
    search: { filters: { idOrExternalId: 'ord_x', startingAfter: { createdAt: 5, id: 'ord_x' } }, index: 'orders_list' },
  };
  test.each(Object.entries(queries))('%s', async (_name, { filters, index }) => {
    const { db } = h.service;
    const compiled = orderPageQuery(db.kysely, { accountId: 'acct_x', mode: 'test', limit: 20, ...filters }).compile();
    let plan: string;
    if (db.engine.name === 'sqlite') {
      const result = await db.kysely.executeQuery(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
      plan = (result.rows as { detail: string }[]).map((r) => r.detail).join('\n');
      expect(plan).toMatch(/SEARCH orders USING (COVERING )?INDEX orders_list/);
      expect(plan).toMatch(new RegExp(`INDEX ${index}\\b`));
      // A cursor bounds the index range itself, not just a filter over it.
      if ('startingAfter' in filters || 'endingBefore' in filters) expect(plan).toMatch(/created_at[<>]\?/);
      expect(plan).not.toMatch(/SCAN orders/);
    } else {
      plan = await db.kysely.transaction().execute(async (tx) => {
        // A tiny test table would be read whole anyway; forbid that to see whether an index path exists.
        await sql`set local enable_seqscan = off`.execute(tx);
        const result = await tx.executeQuery(CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]));
        return (result.rows as Record<string, string>[]).map((r) => Object.values(r)[0]).join('\n');
      });
      // PostgreSQL picks among the indexes by its statistics of the moment (a tiny table after
      // the suite's other tests): any of them is a range, never a scan of the table.
      expect(plan).toMatch(/Index (Only )?Scan (Backward )?using orders_list/);
      expect(plan).not.toMatch(/Seq Scan/);
      if ('startingAfter' in filters || 'endingBefore' in filters) expect(plan).toMatch(/Index Cond: .*created_at [<>]=/);
    }
  });
});

test('the journal and balances stay consistent (ledger verify)', async () => {
  await quiesce(h);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
