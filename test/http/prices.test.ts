import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { definePricePlan, type PlanTier, parseMarkupPercent, parseTierSpec } from '../../src/domain/price-plan.js';
import { assignPlan, definePlan } from '../../src/plans/plan-store.js';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectOk, getQuote, postOrder, STARS_50, waitForStatus } from '../support/http.js';

/**
 * GET /prices (docs/api.md "GET /prices"): the key's account's prices in the key's mode, priced
 * as GET /quote prices, with the volume tier and what the next tier needs.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
afterEach(() => h.setTonUsdRate('3.0'));

const getPrices = (key: string) => call(h, { path: '/prices', key });
const ton = (value: string) => ({ value, currency: 'TON' });
const unitPrices = (body: { prices: { unit_price: { value: string } }[] }) => body.prices.map((line) => line.unit_price.value);

async function onPlan(accountId: string, name: string, kind: 'markup' | 'prices', tiers: PlanTier[]): Promise<void> {
  await definePlan(h.service.db, definePricePlan(name, kind, tiers), { actor: 'test', now: Date.now() });
  await assignPlan(h.service.db, { accountId, plan: name, actor: 'test', reason: 'prices test', now: Date.now() });
}

describe('GET /prices', () => {
  test('without a plan: the list price, one tier; it follows the rate like GET /quote', async () => {
    const a = await h.account();
    const res = await getPrices(a.testKey);
    expectOk(res);
    expect(res.body).toEqual({
      ok: true,
      mode: 'test',
      prices: [
        { product: 'stars', quantity_rule: 'an integer from 50 to 10000', min_quantity: 50, max_quantity: 10000, unit_price: ton('0.005') },
        { product: 'premium', quantity_rule: '3 (months)', min_quantity: 3, max_quantity: 3, unit_price: ton('3.996666667') },
        { product: 'premium', quantity_rule: '6 (months)', min_quantity: 6, max_quantity: 6, unit_price: ton('5.33') },
        { product: 'premium', quantity_rule: '12 (months)', min_quantity: 12, max_quantity: 12, unit_price: ton('9.663333334') },
      ],
      volume: ton('0'),
      tier: { number: 1, of: 1 },
      next_tier: null,
    });
    h.setTonUsdRate('1.5');
    expect(unitPrices((await getPrices(a.testKey)).body)).toEqual(['0.01', '7.993333334', '10.66', '19.326666667']);
    // A Premium period's unit price is what GET /quote asks for it.
    expect((await getQuote(h, a.testKey, '?product=premium&quantity=12')).body.amount.value).toBe('19.326666667');
  });

  test("the account's plan, its tier and what the next tier needs; a delivery moves them", async () => {
    const a = await h.account({ test: '10' });
    await onPlan(a.accountId, `tiers-${Date.now()}`, 'markup', [
      { fromNanotons: 0n, markupPercent: parseMarkupPercent('20') },
      { fromNanotons: 500_000_000n, markupPercent: parseMarkupPercent('10') },
    ]);
    const before = await getPrices(a.testKey);
    expectOk(before);
    expect(before.body).toMatchObject({ volume: ton('0'), tier: { number: 1, of: 2 }, next_tier: { from: ton('0.5'), needs: ton('0.5') } });
    expect(unitPrices(before.body)[0]).toBe('0.006'); // 0.005 × 1.2
    const order = await postOrder(h, a.testKey, STARS_50);
    expect(order.body.amount.value).toBe('0.3');
    await waitForStatus(h, a.testKey, order.body.id, ['delivered']);
    expect((await getPrices(a.testKey)).body).toMatchObject({ volume: ton('0.3'), tier: { number: 1, of: 2 }, next_tier: { from: ton('0.5'), needs: ton('0.2') } });
    const second = await postOrder(h, a.testKey, STARS_50);
    await waitForStatus(h, a.testKey, second.body.id, ['delivered']);
    const after = await getPrices(a.testKey);
    expect(after.body).toMatchObject({ volume: ton('0.6'), tier: { number: 2, of: 2 }, next_tier: null });
    expect(unitPrices(after.body)[0]).toBe('0.0055');
    // The live key: live volume (none yet), live prices (RATE_FEED=fixed: the same list).
    expect((await getPrices(a.liveKey)).body).toMatchObject({ mode: 'live', volume: ton('0'), tier: { number: 1, of: 2 } });
  });

  test('a plan of USD prices', async () => {
    const a = await h.account();
    await onPlan(a.accountId, `usd-${Date.now()}`, 'prices', [parseTierSpec('prices', '0:star=0.012,premium3=9,premium6=15,premium12=27', undefined)]);
    expect(unitPrices((await getPrices(a.testKey)).body)).toEqual(['0.004', '3', '5', '9']);
  });

  test('needs a key', async () => {
    expect((await call(h, { path: '/prices' })).status).toBe(401);
  });
});
