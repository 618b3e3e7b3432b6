import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticate } from '../../src/accounts/accounts.js';
import { definePricePlan, parseMarkupPercent } from '../../src/domain/price-plan.js';
import { assignPlan, definePlan } from '../../src/plans/plan-store.js';
import { cliFor, describeRun } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';
import { expectOk, getQuote, postOrder, STARS_50 } from '../support/http.js';

/**
 * An API request learns its account's plan with its key's verdict (src/accounts/key-verdict.ts),
 * which SQLite answers from a per-process cache. A plan assignment, by this process or by the
 * CLI (another process), prices the very next request of a key already cached. Defaults: 50
 * stars list at 0.75 USD = 0.25 TON (TON_USD_RATE 3).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function plan(percent: string): Promise<string> {
  const name = `cached-${percent}-${Date.now()}`;
  await definePlan(h.service.db, definePricePlan(name, 'markup', [{ fromNanotons: 0n, markupPercent: parseMarkupPercent(percent) }]), { actor: 'test', now: Date.now() });
  return name;
}

async function quoted(key: string): Promise<string> {
  const res = await getQuote(h, key, '?product=stars&quantity=50');
  expectOk(res);
  return res.body.amount.value;
}

async function bought(key: string, n: number): Promise<string> {
  const res = await postOrder(h, key, STARS_50, `cached-plan-${n}`);
  expectOk(res, 201);
  return res.body.amount.value;
}

describe('a plan assigned while the key is cached', () => {
  test('prices the very next quote and order, whether assigned in this process or by the CLI', async () => {
    const a = await h.account({ test: '10' });
    const [twenty, forty] = [await plan('20'), await plan('40')];
    expect(await quoted(a.testKey)).toBe('0.25');
    // The verdict is now what the key's next request is answered with.
    expect(await authenticate(h.service.db, a.testKey)).toMatchObject({ ok: true, planName: null });

    await assignPlan(h.service.db, { accountId: a.accountId, plan: twenty, actor: 'test', reason: 'cached key test', now: Date.now() });
    expect(await quoted(a.testKey)).toBe('0.3'); // 0.75 USD × 1.2 ÷ 3
    expect(await bought(a.testKey, 1)).toBe('0.3');

    const cli = cliFor({ ...h.databaseEnv, STARPORT_ACTOR: 'test-operator' });
    const args = ['plan', 'assign', '--account', a.accountId, '--plan', forty, '--reason', 'cached key test'];
    const assigned = await cli(args);
    expect(assigned.code, describeRun(args, assigned)).toBe(0);
    expect(await quoted(a.testKey)).toBe('0.35'); // 0.75 USD × 1.4 ÷ 3
    expect(await bought(a.testKey, 2)).toBe('0.35');

    const back = ['plan', 'assign', '--account', a.accountId, '--plan', 'default', '--reason', 'cached key test'];
    const defaulted = await cli(back);
    expect(defaulted.code, describeRun(back, defaulted)).toBe(0);
    expect(await quoted(a.testKey)).toBe('0.25');
    expect(await bought(a.testKey, 3)).toBe('0.25');
  }, 120_000);
});
