import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { signedInOperator, totpCode } from '../support/console.js';
import { seedDeposit } from '../support/console-data.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, expectError, getBalance, seedLiveOrder } from '../support/http.js';

/**
 * The console's account page, complete: the account's keys, orders, deposits, balance history
 * and webhook endpoints (and nothing of another account's); an admin revokes a key (it answers
 * 401 api_key_revoked at once) and reissues one with the two-factor code asked again, the new
 * key shown once in the answer and nowhere after (audit rows, later pages); support reads the
 * page without the key forms and is refused their POSTs.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

/** A TON deposit credited to the account, as the watcher records one. */
const creditedDeposit = (accountId: string, nanotons: bigint) =>
  seedDeposit(h, { amount: nanotons, status: 'credited', reason: null, account_id: accountId, credited_at: Date.now(), credited_by: 'watcher' });

/** The rows of the page marked data-testid=`testId`, as markup. */
const rowsOf = (body: string, testId: string) =>
  body
    .split(`<tr data-testid="${testId}">`)
    .slice(1)
    .map((row) => row.slice(0, row.indexOf('</tr>')));

/** An account with one of everything the page lists. */
async function furnished(tag: string) {
  const account = await h.account({ live: '10', test: '3' });
  const order = await seedLiveOrder(h, account.accountId, { idempotencyKey: `page-${tag}`, product: 'stars', username: 'durov', quantity: 50 });
  const deposit = await creditedDeposit(account.accountId, 2_500_000_000n);
  const hook = await createEndpoint(
    h.service.db.kysely,
    { accountId: account.accountId, mode: 'test' },
    { url: `https://hooks.example.com/${tag}`, events: ['order.delivered'], now: Date.now() },
  );
  return { account, orderId: order.order.id, deposit, hook };
}

test('the page shows the account’s keys, orders, deposits, history and endpoints, and nothing of another account', async () => {
  const support = await signedInOperator(h, 'support');
  const mine = await furnished('mine');
  const theirs = await furnished('theirs');
  const page = await support.client.get(`/accounts/${mine.account.accountId}`);
  expect(page.status).toBe(200);
  const body = page.body;
  for (const heading of ['API keys', 'Orders (newest 20)', 'Deposits (newest 20)', 'Balance history (newest 20 per mode)', 'Webhook endpoints']) expect(body).toContain(heading);

  expect(body.match(/data-testid="key"/g)?.length).toBe(2);
  expect(body).toContain(`${mine.account.liveKey.slice(0, 12)}`);
  expect(body).not.toContain(mine.account.liveKey);
  expect(body).toContain(`href="/orders/${mine.orderId}"`);
  expect(body).toContain(`href="/orders?q=${mine.account.accountId}"`);
  expect(body).toContain(`href="/deposits/${mine.deposit.id}"`);
  expect(body).toMatch(new RegExp(`href="https://(testnet\\.)?tonviewer\\.com/transaction/${mine.deposit.txHash}"`));
  expect(body).toContain('2.5 TON');
  // The journal: the funding of both modes and the order's reserve, linked to the order.
  expect(body.match(/data-testid="journal-entry"/g)?.length).toBe(3);
  const reserve = rowsOf(body, 'journal-entry').find((row) => row.includes('<td data-label="Kind">reserve</td>'));
  expect(reserve).toContain(`href="/orders/${mine.orderId}"`);
  expect(body).toContain('https://hooks.example.com/mine');
  expect(body).toContain('order.delivered');
  expect(body).not.toContain(mine.hook.secret);

  for (const other of [theirs.account.accountId, theirs.orderId, theirs.deposit.id, theirs.deposit.txHash, 'https://hooks.example.com/theirs'])
    expect(body, other).not.toContain(other);

  // The account's orders list in the console: filtered by it.
  const list = await support.client.get(`/orders?q=${mine.account.accountId}`);
  expect(list.body).toContain(mine.orderId);
  expect(list.body).not.toContain(theirs.orderId);
});

test('support reads the page without the key forms; its key POSTs are refused and change nothing', async () => {
  const support = await signedInOperator(h, 'support');
  const account = await h.account({ live: '1' });
  const page = await support.client.get(`/accounts/${account.accountId}`);
  expect(page.status).toBe(200);
  expect(page.body).toContain('API keys');
  expect(page.body).not.toContain('key-revoke-form');
  expect(page.body).not.toContain('key-reissue-form');
  expect(page.body).not.toContain('/keys/');
  for (const action of ['revoke', 'reissue']) {
    const refused = await support.client.post(`/accounts/${account.accountId}/keys/${action}`, {
      mode: 'live',
      reason: 'try',
      code: await totpCode(support.secret, 1),
      _csrf: page.csrf as string,
    });
    expect(refused.status, action).toBe(403);
  }
  expect((await balanceOf(h, account.liveKey)).value).toBe('1');
  expect(await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 10 })).toEqual([]);
});

test('an admin revokes a key with a reason: 401 api_key_revoked from the next request, audited', async () => {
  const admin = await signedInOperator(h, 'admin', '10.44.7.1');
  const account = await h.account({ live: '1', test: '1' });
  const page = await admin.client.get(`/accounts/${account.accountId}`);
  expect(page.body).toContain('key-revoke-form');
  const url = `/accounts/${account.accountId}/keys/revoke`;
  expect((await admin.client.post(url, { mode: 'live', reason: ' ', _csrf: page.csrf as string })).status).toBe(400);
  expect((await admin.client.post(url, { mode: 'both', reason: 'leak', _csrf: page.csrf as string })).status).toBe(400);
  expect((await balanceOf(h, account.liveKey)).value).toBe('1');

  const revoked = await admin.client.post(url, { mode: 'live', reason: 'leaked in a repo', _csrf: page.csrf as string });
  expect(revoked.location).toBe(`/accounts/${account.accountId}?notice=key-revoked`);
  expectError(await getBalance(h, account.liveKey), 401, 'api_key_revoked');
  expect((await balanceOf(h, account.testKey)).value).toBe('1');
  const again = await admin.client.post(url, { mode: 'live', reason: 'twice', _csrf: page.csrf as string });
  expect(again.status).toBe(409);
  expect(again.body).toContain('no active live key');

  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 5 });
  expect(rows.map((r) => [r.action, r.mode, r.source, r.actor, r.operatorId, r.ip, r.reason, r.details.key_prefix])).toEqual([
    ['key.revoke', 'live', 'console', admin.email, admin.operatorId, '10.44.7.1', 'leaked in a repo', account.liveKey.slice(0, 12)],
  ]);
  const after = await admin.client.get(`/accounts/${account.accountId}`);
  const live = rowsOf(after.body, 'key').filter((row) => row.includes('<td data-label="Mode">live</td>'));
  expect(live.map((row) => row.includes('revoked'))).toEqual([true]);
});

test('reissue asks for the code: a wrong one changes nothing; the right one shows the key once, nowhere after', async () => {
  const admin = await signedInOperator(h, 'admin', '10.44.7.2');
  const account = await h.account({ live: '4' });
  const page = await admin.client.get(`/accounts/${account.accountId}`);
  const url = `/accounts/${account.accountId}/keys/reissue`;
  const form = { mode: 'live', reason: 'client lost it', _csrf: page.csrf as string };

  const wrong = await admin.client.post(url, { ...form, code: '000000' });
  expect(wrong.status).toBe(401);
  expect(wrong.body).toContain('No key was issued');
  expect(wrong.body).not.toContain('data-testid="new-key"');
  expect((await balanceOf(h, account.liveKey)).value).toBe('4');
  expect(await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 5 })).toEqual([]);
  expect((await admin.client.post(url, { ...form, reason: '', code: await totpCode(admin.secret, 1) })).status).toBe(400);

  const issued = await admin.client.post(url, { ...form, code: await totpCode(admin.secret, 1) });
  expect(issued.status).toBe(200);
  expect(issued.location).toBeUndefined();
  const key = /data-testid="new-key">([^<]+)</.exec(issued.body)?.[1] as string;
  expect(key).toMatch(/^sk_live_/);
  expect(key).not.toBe(account.liveKey);
  expect((await balanceOf(h, key)).value).toBe('4');
  expectError(await getBalance(h, account.liveKey), 401, 'api_key_revoked');

  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 5 });
  expect(rows.map((r) => [r.action, r.mode, r.source, r.operatorId, r.ip, r.reason, r.details.new_key_prefix])).toEqual([
    ['key.reissue', 'live', 'console', admin.operatorId, '10.44.7.2', 'client lost it', key.slice(0, 12)],
  ]);
  expect(JSON.stringify(rows)).not.toContain(key);
  for (const later of [`/accounts/${account.accountId}`, `/audit?account=${account.accountId}`, '/audit']) {
    const shown = await admin.client.get(later);
    expect(shown.status, later).toBeLessThan(500);
    expect(shown.body, later).not.toContain(key);
  }
  expect((await admin.client.get(`/accounts/${account.accountId}`)).body).toContain(`${key.slice(0, 12)}…`);
});
