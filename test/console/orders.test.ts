import { randomBytes } from 'node:crypto';
import { Address } from '@ton/core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { signedInOperator, totpCode } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, seedLiveOrder } from '../support/http.js';
import { heldOrder } from '../support/console-data.js';

/**
 * The console's orders: the list across accounts with the dashboard's filters, the held-for-review
 * queue with its evidence, an order's page; an admin resolves a held order with a reason and the
 * code asked again (the CLI's own operation), audited with the operator and IP; support and bad
 * input are refused; two admins resolving at once: one wins, the other is told, money moves once.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

let seq = 0;
const hex = () => randomBytes(32).toString('hex');

test('the list filters across accounts; bad filters are refused with the reason', async () => {
  const support = await signedInOperator(h, 'support');
  const a = await h.account({ live: '20' });
  const b = await h.account({ live: '20' });
  const stars = await seedLiveOrder(h, a.accountId, { idempotencyKey: `l-${++seq}`, product: 'stars', username: 'durov', quantity: 50, externalId: `ext-${seq}` });
  const premium = await seedLiveOrder(h, b.accountId, { idempotencyKey: `l-${++seq}`, product: 'premium', username: 'durov', quantity: 3 });

  const all = await support.client.get('/orders?mode=live');
  expect(all.status).toBe(200);
  expect(all.body).toContain(stars.order.id);
  expect(all.body).toContain(premium.order.id);
  const premiumOnly = await support.client.get(`/orders?product=premium&q=${b.accountId}`);
  expect(premiumOnly.body).toContain(premium.order.id);
  expect(premiumOnly.body).not.toContain(stars.order.id);
  const byAccount = await support.client.get(`/orders?q=${a.accountId}&status=fulfillment_pending`);
  expect(byAccount.body).toContain(stars.order.id);
  expect(byAccount.body).not.toContain(premium.order.id);
  const byExternal = await support.client.get(`/orders?q=${stars.order.externalId}`);
  expect(byExternal.body).toContain(stars.order.id);
  expect(byExternal.body).not.toContain(premium.order.id);
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  expect((await support.client.get(`/orders?q=${a.accountId}&from=${today}&to=${today}`)).body).toContain(stars.order.id);
  const before = await support.client.get(`/orders?q=${a.accountId}&to=${yesterday}`);
  expect(before.body).not.toContain(stars.order.id);
  expect(before.body).toContain('data-testid="no-orders"');
  expect((await support.client.get(`/orders?q=${a.accountId}&mode=test`)).body).not.toContain(stars.order.id);

  for (const [query, message] of [
    ['status=lost', 'Status must be one of'],
    ['product=gold', 'Product must be one of'],
    ['mode=both', 'Mode must be live or test'],
    ['from=2026-02-30', 'is not a date'],
    [`from=${today}&to=${yesterday}`, 'To must be on or after From'],
  ]) {
    const bad = await support.client.get(`/orders?${query}`);
    expect(bad.status, query).toBe(400);
    expect(bad.body, query).toContain(message);
    expect(bad.body).not.toContain('data-testid="orders"');
  }
});

test('the held queue shows the evidence; the order page its timeline and the transaction link; support cannot resolve', async () => {
  const support = await signedInOperator(h, 'support');
  const account = await h.account({ live: '10' });
  const held = await heldOrder(h, account.accountId);
  const paidTx = hex();
  const paid = await heldOrder(h, account.accountId, 'confirmed', paidTx);

  const queue = await support.client.get('/orders?held=1');
  expect(queue.status).toBe(200);
  expect(queue.body).toContain(held.order.id);
  expect(queue.body).toContain(held.fragmentReqId);
  expect(queue.body).toContain(`seqno ${held.seqno} held`);
  // Nothing on chain to link for a held message: the wallet's page, in the form explorers show.
  const walletPage = `href="https://tonviewer.com/${Address.parse(held.wallet).toString({ urlSafe: true, bounceable: true })}"`;
  expect(queue.body).toContain(walletPage);
  expect(queue.body).not.toContain(paid.order.id);
  // Each row its own order's evidence (read for the whole queue at once).
  const second = await heldOrder(h, account.accountId);
  const both = await support.client.get('/orders?held=1');
  for (const o of [held, second]) {
    const row = both.body.slice(both.body.indexOf(`href="/orders/${o.order.id}"`));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain(`${o.fragmentReqId}</span> · seqno ${o.seqno} held`);
  }

  const page = await support.client.get(`/orders/${held.order.id}`);
  expect(page.status).toBe(200);
  expect(page.body).toContain(`data-testid="fragment-req-id">${held.fragmentReqId}<`);
  expect(page.body).toMatch(
    new RegExp(
      `<td data-label="Seqno" class="num">${held.seqno}</td><td data-label="State">held</td><td data-label="For this order">held</td><td data-label="Transaction"><span class="muted">none seen on chain`,
    ),
  );
  // Times read as the dashboard writes them; ISO only in the datetime attributes.
  expect(page.body.replace(/datetime="[^"]*"/g, '')).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
  expect(page.body).toContain(walletPage);
  expect(page.body).toContain('<td data-label="Event">order.created</td>');
  expect(page.body).toContain('<td data-label="Event">order.processing</td>');
  expect(page.body).toContain('Only an admin can resolve this order.');
  expect(page.body).not.toContain(`action="/orders/${held.order.id}/resolve"`);
  expect((await support.client.get(`/orders/${paid.order.id}`)).body).toContain(`href="https://tonviewer.com/transaction/${paidTx}"`);
  expect((await support.client.get('/orders/ord_nosuchorder0000000')).status).toBe(404);

  const refused = await support.client.post(`/orders/${held.order.id}/resolve`, {
    outcome: 'failed',
    reason: 'x',
    code: await totpCode(support.secret, 1),
    _csrf: page.csrf as string,
  });
  expect(refused.status).toBe(403);
  expect((await balanceOf(h, account.liveKey)).reserved).not.toBe('0');
  expect(await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'order.resolve', limit: 5 })).toEqual([]);
});

test('an admin resolves a held order as failed: bad input refused first, the code asked again, audited', async () => {
  const admin = await signedInOperator(h, 'admin', '10.44.4.1');
  const account = await h.account({ live: '10' });
  const held = await heldOrder(h, account.accountId);
  const page = await admin.client.get(`/orders/${held.order.id}`);
  expect(page.body).toContain(`action="/orders/${held.order.id}/resolve"`);
  const form = { outcome: 'failed', reason: 'checked the chain: never paid', _csrf: page.csrf as string };
  const cases: [Record<string, string>, number, string][] = [
    [{ ...form, outcome: 'maybe', code: '000000' }, 400, 'Choose delivered or failed.'],
    [{ ...form, reason: '  ', code: '000000' }, 400, 'Give a reason'],
    [{ ...form, code: '000000' }, 401, 'That two-factor code is not right'],
  ];
  for (const [body, status, message] of cases) {
    const res = await admin.client.post(`/orders/${held.order.id}/resolve`, body);
    expect(res.status).toBe(status);
    expect(res.body).toContain(message);
  }
  expect(await balanceOf(h, account.liveKey)).toMatchObject({ value: String(10 - Number(held.order.amount) / 1e9), reserved: String(Number(held.order.amount) / 1e9) });

  const done = await admin.client.post(`/orders/${held.order.id}/resolve`, { ...form, code: await totpCode(admin.secret, 1) });
  expect(done.location).toBe(`/orders/${held.order.id}?notice=resolved`);
  expect(await balanceOf(h, account.liveKey)).toMatchObject({ value: '10', reserved: '0' });
  const shown = await admin.client.get(`/orders/${held.order.id}?notice=resolved`);
  expect(shown.body).toContain('The order was resolved');
  expect(shown.body).toContain('operator_failed');
  expect(shown.body).not.toContain(`action="/orders/${held.order.id}/resolve"`);
  expect((await admin.client.get('/orders?held=1')).body).not.toContain(held.order.id);
  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'order.resolve', limit: 5 });
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.orderId, r.reason, r.details.to])).toEqual([
    [admin.email, 'console', admin.operatorId, '10.44.4.1', held.order.id, 'checked the chain: never paid', 'failed'],
  ]);
});

test('two admins resolve the same held order at once: one wins, the other is told, the money moves once', async () => {
  const [first, second] = await Promise.all([signedInOperator(h, 'admin'), signedInOperator(h, 'admin')]);
  const account = await h.account({ live: '10' });
  const held = await heldOrder(h, account.accountId);
  const [p1, p2] = await Promise.all([first.client.get(`/orders/${held.order.id}`), second.client.get(`/orders/${held.order.id}`)]);
  const [c1, c2] = await Promise.all([totpCode(first.secret, 1), totpCode(second.secret, 1)]);
  const results = await Promise.all([
    first.client.post(`/orders/${held.order.id}/resolve`, { outcome: 'delivered', reason: 'seen on Fragment', code: c1, _csrf: p1.csrf as string }),
    second.client.post(`/orders/${held.order.id}/resolve`, { outcome: 'delivered', reason: 'seen on Fragment too', code: c2, _csrf: p2.csrf as string }),
  ]);
  expect(results.map((r) => r.status).sort(), results.map((r) => r.body.match(/role="alert">([^<]*)/)?.[1]).join(' / ')).toEqual([303, 409]);
  const won = results.filter((r) => r.location === `/orders/${held.order.id}?notice=resolved`);
  const told = results.filter((r) => r.status === 409);
  expect(won).toHaveLength(1);
  expect(told).toHaveLength(1);
  expect(told[0]?.body).toContain('This order was already resolved as delivered by someone else. Nothing was changed.');
  const db = h.service.db.kysely;
  const { order_no } = await db.selectFrom('orders').select('order_no').where('id', '=', held.order.id).executeTakeFirstOrThrow();
  const journal = await db.selectFrom('journal').select('kind').where('order_no', '=', order_no).execute();
  expect(journal.map((j) => j.kind).sort()).toEqual(['debit', 'reserve']);
  expect(await balanceOf(h, account.liveKey)).toMatchObject({ value: String(10 - Number(held.order.amount) / 1e9), reserved: '0' });
  expect(await listAudit(db, { accountId: account.accountId, action: 'order.resolve', limit: 5 })).toHaveLength(1);
  expect(await verifyLedger(db)).toEqual([]);
});
