import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTon } from '../../src/domain/money.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, call, expectError, expectOk, MONEY, postOrder, quiesce, REQUEST_ID, STARS_50, TIMESTAMP, waitForStatus } from '../support/http.js';

/** GET /balance/history: the journal of the key's mode, newest first, cursor-paginated. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const history = (key: string, query = '') => call(h, { path: `/balance/history${query}`, key });
const fund = (key: string, amount: string) => call(h, { method: 'POST', path: '/test_helpers/fund', key, json: { amount } });

interface Entry {
  id: string;
  type: string;
  amount: string;
  reserved_change: string;
  balance_after: { value: string; reserved: string; currency: string };
  order_id: string | null;
  deposit: { reference: string | null } | null;
  created_at: string;
}

async function walkHistory(key: string, limit: number): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const res = await history(key, `?limit=${limit}${cursor ? `&starting_after=${cursor}` : ''}`);
    expectOk(res);
    expect(res.body.object).toBe('list');
    entries.push(...res.body.data);
    if (!res.body.has_more) return entries;
    cursor = res.body.data[res.body.data.length - 1].id;
  }
  throw new Error('too many pages');
}

describe('entries', () => {
  test('every kind of movement; the entries sum to the balance and each balance_after follows from the one before', async () => {
    const a = await h.account({ test: '5' }); // an operator adjustment
    const funded = await fund(a.testKey, '2.5'); // a deposit
    expectOk(funded);
    const delivered = await postOrder(h, a.testKey, STARS_50);
    const failed = await postOrder(h, a.testKey, { ...STARS_50, recipient: '@test_failed' });
    await waitForStatus(h, a.testKey, delivered.body.id);
    await waitForStatus(h, a.testKey, failed.body.id);
    const open = await postOrder(h, a.testKey, { ...STARS_50, recipient: '@test_slow', quantity: 100 }); // stays reserved a while
    expectOk(open, 201);

    const entries = await walkHistory(a.testKey, 2);
    expect(entries[0]).toMatchObject({ type: 'reserve', order_id: open.body.id, amount: '-0.5', reserved_change: '0.5' });
    const types = new Set(entries.map((e) => e.type));
    for (const type of ['adjustment', 'deposit', 'reserve', 'debit', 'release']) expect(types, type).toContain(type);

    for (const e of entries) {
      expect(Object.keys(e).sort()).toEqual(['amount', 'balance_after', 'created_at', 'deposit', 'id', 'order_id', 'reserved_change', 'type']);
      expect(e.id).toMatch(/^jrn_[0-9A-Za-z]{22}[1-9][0-9]*$/);
      expect(e.amount).toMatch(/^-?(0|[1-9]\d*)(\.\d{0,8}[1-9])?$/);
      expect(e.balance_after.value).toMatch(MONEY);
      expect(e.created_at).toMatch(TIMESTAMP);
      if (['reserve', 'debit', 'release'].includes(e.type)) expect(e.order_id).toMatch(/^ord_/);
      else expect(e.order_id).toBeNull();
      if (e.type === 'deposit') expect(e.deposit).toEqual({ reference: funded.requestId });
      else expect(e.deposit).toBeNull();
    }
    const reserve = entries.find((e) => e.type === 'reserve' && e.order_id === delivered.body.id) as Entry;
    expect(reserve).toMatchObject({ amount: '-0.25', reserved_change: '0.25' });
    expect(entries.find((e) => e.type === 'debit')).toMatchObject({ amount: '0', reserved_change: '-0.25', order_id: delivered.body.id });
    expect(entries.find((e) => e.type === 'release')).toMatchObject({ amount: '0.25', reserved_change: '-0.25', order_id: failed.body.id });
    expect(entries.find((e) => e.type === 'deposit')).toMatchObject({ amount: '2.5', reserved_change: '0' });

    // Newest first; sums and running balances (read again, after the slow order may have moved).
    const settled = await walkHistory(a.testKey, 3);
    const now = await balanceOf(h, a.testKey);
    const sum = (field: 'amount' | 'reserved_change') => settled.reduce((total, e) => total + parseTon(e[field], { allowNegative: true }), 0n);
    expect(sum('amount')).toBe(parseTon(now.value));
    expect(sum('reserved_change')).toBe(parseTon(now.reserved));
    expect(settled[0]!.balance_after).toEqual({ value: now.value, reserved: now.reserved, currency: 'TON' });
    const oldestFirst = [...settled].reverse();
    let value = 0n;
    let reserved = 0n;
    for (const e of oldestFirst) {
      value += parseTon(e.amount, { allowNegative: true });
      reserved += parseTon(e.reserved_change, { allowNegative: true });
      expect({ value: parseTon(e.balance_after.value), reserved: parseTon(e.balance_after.reserved) }, e.id).toEqual({ value, reserved });
    }
  });

  test('pages: starting_after / ending_before by entry id; other balances’ ids are no cursors', async () => {
    const a = await h.account({ test: '1', live: '3' });
    const other = await h.account({ test: '1' });
    for (const amount of ['0.1', '0.2', '0.3', '0.4']) expectOk(await fund(a.testKey, amount));
    const all = (await history(a.testKey)).body.data as Entry[];
    expect(all.map((e) => e.amount)).toEqual(['0.4', '0.3', '0.2', '0.1', '1']);
    const page2 = await history(a.testKey, `?limit=2&starting_after=${all[1]!.id}`);
    expect(page2.body.data.map((e: Entry) => e.id)).toEqual([all[2]!.id, all[3]!.id]);
    expect(page2.body.has_more).toBe(true);
    const back = await history(a.testKey, `?limit=2&ending_before=${all[2]!.id}`);
    expect(back.body.data.map((e: Entry) => e.id)).toEqual([all[0]!.id, all[1]!.id]);
    expect(back.body.has_more).toBe(false);
    const backMore = await history(a.testKey, `?limit=1&ending_before=${all[2]!.id}`);
    expect(backMore.body.data.map((e: Entry) => e.id)).toEqual([all[1]!.id]);
    expect(backMore.body.has_more).toBe(true);

    // The live key sees the live journal only.
    const live = (await history(a.liveKey)).body.data as Entry[];
    expect(live.map((e) => [e.type, e.amount])).toEqual([['adjustment', '3']]);
    expectError(await history(a.testKey, `?starting_after=${live[0]!.id}`), 400, 'invalid_request', 'starting_after');
    const theirs = (await history(other.testKey)).body.data[0].id;
    expectError(await history(a.testKey, `?ending_before=${theirs}`), 400, 'invalid_request', 'ending_before');
    expectError(await history(a.testKey, '?starting_after=jrn_nope'), 400, 'invalid_request', 'starting_after');
    // A cursor names its entry by the whole id, not by the seq it ends with.
    const forged = `jrn_${'A'.repeat(22)}${all[1]!.id.slice(26)}`;
    expectError(await history(a.testKey, `?starting_after=${forged}`), 400, 'invalid_request', 'starting_after');
    expectError(await history(a.testKey, '?limit=0'), 400, 'invalid_request', 'limit');
    expectError(await history(a.testKey, '?limit=1.0'), 400, 'invalid_request', 'limit');
    expectError(await history(a.testKey, `?starting_after=${all[0]!.id}&ending_before=${all[1]!.id}`), 400, 'invalid_request', 'ending_before');
  });

  test('a new account has an empty history', async () => {
    const a = await h.account();
    const res = await history(a.testKey);
    expectOk(res);
    expect(res.body).toEqual({ ok: true, object: 'list', data: [], has_more: false });
    expect(res.requestId).toMatch(REQUEST_ID);
  });
});

test('the journal and balances stay consistent (ledger verify)', async () => {
  await quiesce(h, 15_000);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
