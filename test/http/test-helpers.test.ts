import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, call, expectError, expectOk, expectRejected, postOrder, quiesce, STARS_50, waitForStatus } from '../support/http.js';

/** POST /test_helpers/fund: test keys credit their test balance through the ledger. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const fund = (key: string | undefined, json: unknown, headers: Record<string, string> = {}) =>
  call(h, { method: 'POST', path: '/test_helpers/fund', ...(key !== undefined && { key }), json, headers });

describe('funding', () => {
  test('credits the test balance as a deposit; the money is spendable at once', async () => {
    const a = await h.account();
    const res = await fund(a.testKey, { amount: '12.5' });
    expectOk(res);
    expect(res.body).toEqual({
      ok: true,
      entry: {
        id: expect.stringMatching(/^jrn_/),
        type: 'deposit',
        amount: '12.5',
        reserved_change: '0',
        balance_after: { value: '12.5', reserved: '0', currency: 'TON' },
        order_id: null,
        deposit: { reference: res.requestId },
        created_at: expect.any(String),
      },
      balance: { value: '12.5', reserved: '0', currency: 'TON' },
    });
    expectOk(await fund(a.testKey, { amount: '0.000000001' }));
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '12.500000001', reserved: '0', currency: 'TON' });
    expect(await balanceOf(h, a.liveKey)).toEqual({ value: '0', reserved: '0', currency: 'TON' });
    const order = await postOrder(h, a.testKey, STARS_50);
    expectOk(order, 201);
    await waitForStatus(h, a.testKey, order.body.id);
    expect((await balanceOf(h, a.testKey)).value).toBe('12.250000001');
    // Not idempotent: each call credits again.
    expectOk(await fund(a.testKey, { amount: '1000000' }));
    expect((await balanceOf(h, a.testKey)).value).toBe('1000012.250000001');
  });

  test('a test balance holds at most 1,000,000,000 TON', async () => {
    const a = await h.account({ test: '999999999.5' });
    await expectRejected(h, () => fund(a.testKey, { amount: '1' }), 400, 'invalid_request', 'amount');
    expectOk(await fund(a.testKey, { amount: '0.5' }));
  });
});

describe('refusals write nothing', () => {
  test('a live key → 403 test_key_required, before its body is read', async () => {
    const a = await h.account({ live: '1' });
    await expectRejected(h, () => fund(a.liveKey, { amount: '10' }), 403, 'test_key_required', null);
    await expectRejected(h, () => fund(a.liveKey, { amount: 'lots', extra: 1 }), 403, 'test_key_required');
    await expectRejected(
      h,
      () => call(h, { method: 'POST', path: '/test_helpers/fund', key: a.liveKey, raw: 'not json', headers: { 'content-type': 'text/plain' } }),
      403,
      'test_key_required',
    );
    expect(await balanceOf(h, a.liveKey)).toEqual({ value: '1', reserved: '0', currency: 'TON' });
  });

  test('authentication comes first', async () => {
    await expectRejected(h, () => fund(undefined, { amount: '10' }), 401, 'missing_api_key');
    await expectRejected(h, () => fund('sk_test_nope', { amount: '10' }), 401, 'invalid_api_key');
  });

  test.each([
    [{ amount: '0' }, 'amount'],
    [{ amount: '0.000000000' }, 'amount'],
    [{ amount: '-1' }, 'amount'],
    [{ amount: '1.0000000001' }, 'amount'],
    [{ amount: '1000000.000000001' }, 'amount'],
    [{ amount: '1e3' }, 'amount'],
    [{ amount: ' 1' }, 'amount'],
    [{ amount: '1.' }, 'amount'],
    [{ amount: '' }, 'amount'],
    [{ amount: 12.5 }, 'amount'],
    [{ amount: null }, 'amount'],
    [{}, 'amount'],
    [{ amount: '1', currency: 'TON' }, 'currency'],
  ])('%j → 400 invalid_request (param %s)', async (body, param) => {
    const a = await h.account();
    await expectRejected(h, () => fund(a.testKey, body), 400, 'invalid_request', param);
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '0', reserved: '0', currency: 'TON' });
  });

  test('the body rules of every POST', async () => {
    const a = await h.account();
    expectError(await call(h, { method: 'POST', path: '/test_helpers/fund', key: a.testKey, raw: '{', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
    expectError(
      await call(h, { method: 'POST', path: '/test_helpers/fund', key: a.testKey, raw: 'amount=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
  });
});

test('the journal and balances stay consistent (ledger verify)', async () => {
  await quiesce(h);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
