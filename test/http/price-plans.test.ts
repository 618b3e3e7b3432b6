import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { definePricePlan, parseMarkupPercent, parseStarUsd, parsePremiumUsd, type PlanTier } from '../../src/domain/price-plan.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { assignPlan, definePlan } from '../../src/plans/plan-store.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, expectOk, getQuote, postOrder, STARS_50, waitForStatus } from '../support/http.js';

/**
 * Price plans through the API (docs/operations.md "Price plans"): GET /quote and POST /orders
 * price each account by its plan, a delivery that crosses a tier's volume moves the next
 * quote, and a locked quote keeps its amount across a plan change. Defaults: TON_USD_RATE 3,
 * PRICE_STAR_USD 0.015, so 50 stars list at 0.75 USD = 0.25 TON.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const markup = (percent: string, from = 0n): PlanTier => ({ fromNanotons: from, markupPercent: parseMarkupPercent(percent) });
let planSeq = 0;

async function plan(kind: 'markup' | 'prices', tiers: PlanTier[]): Promise<string> {
  const name = `plan-${++planSeq}-${Date.now()}`;
  await definePlan(h.service.db, definePricePlan(name, kind, tiers), { actor: 'test', now: Date.now() });
  return name;
}

async function assign(accountId: string, name: string): Promise<void> {
  await assignPlan(h.service.db, { accountId, plan: name, actor: 'test', reason: 'price plan test', now: Date.now() });
}

async function quoted(key: string, query = '?product=stars&quantity=50'): Promise<{ id: string; value: string }> {
  const res = await getQuote(h, key, query);
  expectOk(res);
  return { id: res.body.id, value: res.body.amount.value };
}

async function bought(key: string, body: Record<string, unknown> = STARS_50): Promise<{ id: string; value: string }> {
  const res = await postOrder(h, key, body);
  expectOk(res, 201);
  return { id: res.body.id, value: res.body.amount.value };
}

describe('two accounts on different plans', () => {
  test('quote and buy the same product at their own prices; an account without a plan is priced as before', async () => {
    const [marked, priced, plain] = [await h.account({ test: '10' }), await h.account({ test: '10' }), await h.account({ test: '10' })];
    await assign(marked.accountId, await plan('markup', [markup('20')]));
    const prices = { starUsd: parseStarUsd('0.012'), premiumUsd: { 3: parsePremiumUsd('9', 3), 6: parsePremiumUsd('15', 6), 12: parsePremiumUsd('27', 12) } };
    await assign(priced.accountId, await plan('prices', [{ fromNanotons: 0n, prices }]));

    expect((await quoted(marked.testKey)).value).toBe('0.3'); // 0.75 USD × 1.2 ÷ 3
    expect((await quoted(priced.testKey)).value).toBe('0.2'); // 50 × 0.012 USD ÷ 3
    expect((await quoted(plain.testKey)).value).toBe('0.25');
    expect((await quoted(priced.testKey, '?product=premium&quantity=3')).value).toBe('3'); // 9 USD ÷ 3
    expect((await quoted(marked.liveKey)).value).toBe('0.3'); // live mode, list prices (RATE_FEED=fixed)

    // Without a quote, each order is charged its account's price; with one, the quoted amount.
    expect((await bought(marked.testKey)).value).toBe('0.3');
    expect((await bought(priced.testKey)).value).toBe('0.2');
    expect((await bought(plain.testKey)).value).toBe('0.25');
    const q = await quoted(priced.testKey, '?product=premium&quantity=3');
    expect((await bought(priced.testKey, { product: 'premium', recipient: 'durov', quantity: 3, quote_id: q.id })).value).toBe('3');
    expect(await balanceOf(h, marked.testKey)).toMatchObject({ value: '9.7' });
    expect(await balanceOf(h, priced.testKey)).toMatchObject({ value: '6.8' });
    expect(await balanceOf(h, plain.testKey)).toMatchObject({ value: '9.75' });
  });
});

describe('volume tiers', () => {
  test('a delivery that crosses a tier boundary moves the next quote', async () => {
    const a = await h.account({ test: '10' });
    // 20% until 0.5 TON delivered in 30 days, then 0%.
    await assign(a.accountId, await plan('markup', [markup('20'), markup('0', 500_000_000n)]));
    const first = await bought(a.testKey);
    expect(first.value).toBe('0.3');
    await waitForStatus(h, a.testKey, first.id, ['delivered']);
    expect((await quoted(a.testKey)).value, '0.3 TON delivered: still below 0.5').toBe('0.3');
    const second = await bought(a.testKey);
    expect(second.value).toBe('0.3');
    await waitForStatus(h, a.testKey, second.id, ['delivered']);
    expect((await quoted(a.testKey)).value, '0.6 TON delivered: the 0% tier').toBe('0.25');
    // Per mode: live volume is its own, still in the first tier.
    expect((await quoted(a.liveKey)).value).toBe('0.3');
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('a failed order is no volume', async () => {
    const a = await h.account({ test: '10' });
    await assign(a.accountId, await plan('markup', [markup('20'), markup('0', 1n)]));
    // Test mode: @test_invalid is accepted, then fails (docs/api.md "Test mode").
    const failed = await bought(a.testKey, { ...STARS_50, recipient: '@test_invalid' });
    await waitForStatus(h, a.testKey, failed.id, ['failed']);
    expect((await quoted(a.testKey)).value).toBe('0.3');
  });
});

describe('plan changes', () => {
  test('a locked quote keeps its price across a plan change; new quotes and orders take the new plan; audited', async () => {
    const a = await h.account({ test: '10' });
    const locked = await quoted(a.testKey);
    expect(locked.value).toBe('0.25');
    const gold = await plan('markup', [markup('20')]);
    await assign(a.accountId, gold);
    expect((await quoted(a.testKey)).value).toBe('0.3');
    expect((await bought(a.testKey, { ...STARS_50, quote_id: locked.id })).value).toBe('0.25');
    expect((await bought(a.testKey)).value).toBe('0.3');
    // Back to the default: PRICE_MARKUP_PERCENT again.
    await assign(a.accountId, 'default');
    expect((await quoted(a.testKey)).value).toBe('0.25');
    const audit = await listAudit(h.service.db.kysely, { accountId: a.accountId, action: 'plan.assign', limit: 10 });
    expect(audit.map((e) => e.details)).toEqual([
      { from: gold, to: 'default' },
      { from: 'default', to: gold },
    ]);
  });
});
