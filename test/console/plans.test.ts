import { afterAll, beforeAll, expect, test } from 'vitest';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { parseTon } from '../../src/domain/money.js';
import { listAudit } from '../../src/audit/audit.js';
import { findPlan, planOfAccount } from '../../src/plans/plan-store.js';
import { signedInOperator } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { expectOk, getQuote } from '../support/http.js';

/**
 * Price plans in the console: an admin defines a plan with the fields `starport plan create`
 * takes (the same reading, src/plans/plan-input.ts) and puts an account on it, found by its
 * deposit memo; the next quote is at the plan's price; both audited with the operator and their
 * address. Bad values are refused naming the number; support reads the plans and changes nothing.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

/** The nanotons of a quote for 50 stars. */
async function quote(key: string): Promise<bigint> {
  const res = await getQuote(h, key, '?product=stars&quantity=50');
  expectOk(res);
  return parseTon(res.body.amount.value);
}

test('an admin defines a plan and assigns it by memo: the next quote is the plan’s; both audited', async () => {
  const admin = await signedInOperator(h, 'admin', '10.45.0.1');
  const account = await h.account();
  const before = await quote(account.testKey);
  const page = await admin.client.get('/plans');
  expect(page.status).toBe(200);
  const csrf = page.csrf as string;
  const name = `gold-${Date.now()}`;

  const absurd = await admin.client.post('/plans', { _csrf: csrf, name, markup: '5000' });
  expect(absurd.status).toBe(400);
  expect(absurd.body).toContain('5000');
  const both = await admin.client.post('/plans', { _csrf: csrf, name, markup: '5', star: '0.01' });
  expect(both.status).toBe(400);
  expect(await findPlan(h.service.db.kysely, name)).toBeUndefined();

  const created = await admin.client.post('/plans', { _csrf: csrf, name, markup: '100', tiers: '1000:markup=50', reason: 'Q4 offer' });
  expect(created.location).toBe('/plans?notice=created');
  expect((await findPlan(h.service.db.kysely, name))?.tiers).toHaveLength(2);
  expect((await admin.client.get('/plans')).body).toContain(name);

  const memo = await depositMemo(h.service.db, account.accountId);
  const unknown = await admin.client.post('/plans/assign', { _csrf: csrf, account: 'nobody@example.com', plan: name, reason: 'x' });
  expect(unknown.status).toBe(404);
  const assigned = await admin.client.post('/plans/assign', { _csrf: csrf, account: memo, plan: name, reason: 'signed the offer' });
  expect(assigned.location).toBe('/plans?notice=assigned');
  expect((await planOfAccount(h.service.db.kysely, account.accountId))?.name).toBe(name);
  // 100 % markup instead of the default: the price went up.
  expect(await quote(account.testKey)).toBeGreaterThan(before);

  const audit = await listAudit(h.service.db.kysely, { action: 'plan.assign', accountId: account.accountId, limit: 5 });
  expect(audit.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason])).toEqual([[admin.email, 'console', admin.operatorId, '10.45.0.1', 'signed the offer']]);
  const defined = (await listAudit(h.service.db.kysely, { action: 'plan.create', limit: 50 })).find((r) => r.details.plan === name);
  expect(defined).toMatchObject({ source: 'console', operatorId: admin.operatorId, reason: 'Q4 offer' });
});

test('support reads the plans and may not define or assign one', async () => {
  const support = await signedInOperator(h, 'support');
  const page = await support.client.get('/plans');
  expect(page.status).toBe(200);
  expect(page.body).not.toContain('action="/plans/assign"');
  const account = await h.account();
  const refused = await support.client.post('/plans/assign', { _csrf: page.csrf as string, account: account.accountId, plan: 'default', reason: 'x' });
  expect(refused.status).toBe(403);
  expect(await planOfAccount(h.service.db.kysely, account.accountId)).toBeUndefined();
});
