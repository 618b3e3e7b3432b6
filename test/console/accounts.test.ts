import { afterAll, beforeAll, expect, test } from 'vitest';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { listAudit } from '../../src/audit/audit.js';
import { signedInOperator, totpCode } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, seedLiveOrder } from '../support/http.js';

/**
 * The console's accounts: found by e-mail, id, deposit memo or order id; credited and debited
 * by an admin with the code asked again, through the CLI's own operation, audited with the
 * operator and their IP; a debit beyond the available balance refused with the numbers.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

test('search by memo, e-mail, id and order; credit with the code again; a debit too large is refused', async () => {
  const admin = await signedInOperator(h, 'admin', '10.44.3.1');
  const account = await h.account({ live: '10' });
  const email = (await h.service.db.kysely.selectFrom('accounts').select('email').where('id', '=', account.accountId).executeTakeFirstOrThrow()).email;
  const memo = await depositMemo(h.service.db, account.accountId);
  const order = await seedLiveOrder(h, account.accountId, { idempotencyKey: 'acc-1', product: 'stars', username: 'durov', quantity: 50 });
  for (const q of [memo, memo.toLowerCase(), email, account.accountId, order.order.id]) {
    expect((await admin.client.get(`/accounts?q=${encodeURIComponent(q)}`)).location, q).toBe(`/accounts/${account.accountId}`);
  }
  expect((await admin.client.get('/accounts?q=nobody%40example.com')).status).toBe(404);

  const page = await admin.client.get(`/accounts/${account.accountId}`);
  expect(page.status).toBe(200);
  const before = await balanceOf(h, account.liveKey);
  const form = { mode: 'live', direction: 'credit', amount: '5', reason: 'goodwill', _csrf: page.csrf as string };
  const wrongCode = await admin.client.post(`/accounts/${account.accountId}/adjust`, { ...form, code: '000000' });
  expect(wrongCode.status).toBe(401);
  expect((await balanceOf(h, account.liveKey)).value).toBe(before.value);
  const credited = await admin.client.post(`/accounts/${account.accountId}/adjust`, { ...form, code: await totpCode(admin.secret, 1) });
  expect(credited.location).toBe(`/accounts/${account.accountId}?notice=credited`);
  const after = await balanceOf(h, account.liveKey);
  expect(Number(after.value)).toBe(Number(before.value) + 5);

  // A code works once (its 30-second step is spent): a second admin moves money next.
  const other = await signedInOperator(h, 'admin');
  const otherForm = { ...form, _csrf: (await other.client.get(`/accounts/${account.accountId}`)).csrf as string };
  const tooMuch = await other.client.post(`/accounts/${account.accountId}/adjust`, { ...otherForm, direction: 'debit', amount: '1000', code: await totpCode(other.secret, 1) });
  expect(tooMuch.status).toBe(409);
  expect(tooMuch.body).toContain(after.value);
  expect((await balanceOf(h, account.liveKey)).value).toBe(after.value);
  const badAmount = await admin.client.post(`/accounts/${account.accountId}/adjust`, { ...form, amount: '1.0000000001', code: '000000' });
  expect(badAmount.status).toBe(400);

  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'balance.credit', limit: 5 });
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason, r.details.amount])).toEqual([[admin.email, 'console', admin.operatorId, '10.44.3.1', 'goodwill', '5']]);
});

test('an admin disables and enables an account with a reason; its key follows; both audited', async () => {
  const admin = await signedInOperator(h, 'admin', '10.44.3.2');
  const account = await h.account({ live: '1' });
  const page = await admin.client.get(`/accounts/${account.accountId}`);
  const noReason = await admin.client.post(`/accounts/${account.accountId}/disable`, { reason: ' ', _csrf: page.csrf as string });
  expect(noReason.status).toBe(400);
  const disabled = await admin.client.post(`/accounts/${account.accountId}/disable`, { reason: 'chargeback', _csrf: page.csrf as string });
  expect(disabled.location).toBe(`/accounts/${account.accountId}?notice=status`);
  const refused = await h.inject({ method: 'GET', url: '/api/v1/balance', headers: { authorization: `Bearer ${account.liveKey}` } });
  expect(refused.statusCode).toBe(401);
  const enabled = await admin.client.post(`/accounts/${account.accountId}/enable`, { reason: 'resolved', _csrf: page.csrf as string });
  expect(enabled.location).toBe(`/accounts/${account.accountId}?notice=status`);
  expect((await balanceOf(h, account.liveKey)).value).toBe('1');
  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 5 });
  expect(rows.filter((r) => r.action.startsWith('account.')).map((r) => [r.action, r.reason, r.operatorId, r.ip])).toEqual([
    ['account.enable', 'resolved', admin.operatorId, '10.44.3.2'],
    ['account.disable', 'chargeback', admin.operatorId, '10.44.3.2'],
  ]);
});
