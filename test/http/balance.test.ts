import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, call, expectKeyFree, expectOk, expectRejected, getBalance, MONEY, newKey, postOrder, STARS_50, waitForStatus } from '../support/http.js';

/** GET /balance (docs/api.md "GET /balance") and the money rules behind it. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('GET /balance', () => {
  test('a new account: both balances 0, mode test / live by key', async () => {
    const a = await h.account();
    const test_ = await getBalance(h, a.testKey);
    expectOk(test_);
    expect(test_.body).toEqual({ ok: true, balance: { value: '0', reserved: '0', currency: 'TON' }, mode: 'test' });
    const live = await getBalance(h, a.liveKey);
    expectOk(live);
    expect(live.body).toEqual({ ok: true, balance: { value: '0', reserved: '0', currency: 'TON' }, mode: 'live' });
  });

  test('the two modes have separate balances', async () => {
    const a = await h.account({ test: '10', live: '2.5' });
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '10', reserved: '0', currency: 'TON' });
    expect(await balanceOf(h, a.liveKey)).toEqual({ value: '2.5', reserved: '0', currency: 'TON' });
  });

  test('exact to the nanoton, trailing zeros trimmed, no exponent', async () => {
    const a = await h.account({ test: '0.000000001', live: '123456789.120000000' });
    expect((await balanceOf(h, a.testKey)).value).toBe('0.000000001');
    expect((await balanceOf(h, a.liveKey)).value).toBe('123456789.12');
    await h.credit(a.accountId, 'test', '0.999999999');
    expect((await balanceOf(h, a.testKey)).value).toBe('1');
  });

  test('query parameters are ignored and a GET body is not read', async () => {
    const a = await h.account({ test: '1' });
    expectOk(await call(h, { path: '/balance?mode=live&x=1', key: a.testKey }));
    const res = await call(h, { path: '/balance', key: a.testKey, raw: 'x'.repeat(20_000), headers: { 'content-type': 'text/plain' } });
    expectOk(res);
    expect(res.body.balance.value).toBe('1');
  });

  test('a balance is per account', async () => {
    const a = await h.account({ test: '3' });
    const b = await h.account({ test: '4' });
    expect((await balanceOf(h, a.testKey)).value).toBe('3');
    expect((await balanceOf(h, b.testKey)).value).toBe('4');
  });
});

describe('reservation and insufficient_balance', () => {
  test('fund 0.25: a 50-star order (0.25) fits exactly; the next → 402 with details', async () => {
    const a = await h.account({ test: '0.25' });
    const first = await postOrder(h, a.testKey, STARS_50);
    expectOk(first, 201);
    const after = await balanceOf(h, a.testKey);
    expect(after.value).toBe('0');
    expect(['0', '0.25']).toContain(after.reserved); // delivered already, or still reserved

    const key = newKey();
    const res = await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, key), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '0', required: '0.25' });
    expect((await balanceOf(h, a.testKey)).value).toBe('0');

    // The rejected key is free once the balance allows the order.
    await h.credit(a.accountId, 'test', '0.25');
    await expectKeyFree(h, a.testKey, key);
  });

  test('one nanoton short → 402 with exact details; one more nanoton → 201', async () => {
    const a = await h.account({ test: '0.249999999' });
    const res = await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '0.249999999', required: '0.25' });
    for (const value of Object.values(res.body.error.details)) expect(value).toMatch(MONEY);
    await h.credit(a.accountId, 'test', '0.000000001');
    expectOk(await postOrder(h, a.testKey, STARS_50), 201);
    expect((await balanceOf(h, a.testKey)).value).toBe('0');
  });

  test('402 for premium with the exact rounded-up price in details', async () => {
    const a = await h.account({ test: '3.996666666' });
    const res = await expectRejected(h, () => postOrder(h, a.testKey, { product: 'premium', recipient: 'durov', quantity: 3 }), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '3.996666666', required: '3.996666667' });
  });

  test('a new account with no funds → 402 (available "0")', async () => {
    const a = await h.account();
    const res = await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '0', required: '0.25' });
  });

  test('the live balance does not pay for test orders', async () => {
    const a = await h.account({ live: '100' });
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
  });

  test('an open order is shown as reserved; value + reserved is unchanged by creation', async () => {
    const a = await h.account({ test: '10' });
    const res = await postOrder(h, a.testKey, { product: 'premium', recipient: '@test_slow', quantity: 3 });
    expectOk(res, 201);
    // @test_slow stays in processing for TEST_SLOW_DELAY_MS (1.5 s in the harness).
    const open = await balanceOf(h, a.testKey);
    expect(open).toEqual({ value: '6.003333333', reserved: '3.996666667', currency: 'TON' });
    const order = await waitForStatus(h, a.testKey, res.body.id, ['delivered']);
    expect(order.status).toBe('delivered');
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '6.003333333', reserved: '0', currency: 'TON' });
  });

  test('several open orders add up in reserved, exactly', async () => {
    const a = await h.account({ test: '1' });
    for (const quantity of [50, 51, 52]) expectOk(await postOrder(h, a.testKey, { product: 'stars', recipient: 'test_slow', quantity }), 201);
    // 0.25 + 0.255 + 0.26 = 0.765
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '0.235', reserved: '0.765', currency: 'TON' });
    const res = await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '0.235', required: '0.25' });
  });
});

describe('live mode', () => {
  test('POST /orders with a funded live key → 503 live_unavailable; nothing reserved, nothing written', async () => {
    const a = await h.account({ live: '10' });
    const res = await expectRejected(h, () => postOrder(h, a.liveKey, STARS_50), 503, 'live_unavailable');
    expect(res.body.error.message.length).toBeGreaterThan(0);
    expect(await balanceOf(h, a.liveKey)).toEqual({ value: '10', reserved: '0', currency: 'TON' });
  });

  test('GET /balance and GET /quote work with the live key', async () => {
    const a = await h.account({ live: '1.5' });
    const balance = await getBalance(h, a.liveKey);
    expectOk(balance);
    expect(balance.body.mode).toBe('live');
    expectOk(await call(h, { path: '/quote?product=stars&quantity=50', key: a.liveKey }));
  });
});
