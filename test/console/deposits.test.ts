import { afterAll, beforeAll, expect, test } from 'vitest';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { listAudit } from '../../src/audit/audit.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { seedDeposit, signedInOperator, totpCode } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf } from '../support/http.js';

/**
 * The console's deposits: the unmatched ones first with their reason; an admin credits one to
 * the account of a deposit memo or e-mail with the code asked again, or records its return,
 * through the functions of `starport deposit assign|return`, audited with the operator and
 * their IP; a deposit settled once is told so; support reads and is refused; the ledger verifies.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

/** An unmatched TON (or USDT) deposit as the watcher records one; its id and transaction hash. */
const unmatchedDeposit = (reason: 'no_comment' | 'memo_invalid' | 'memo_unknown' | 'below_minimum', nanotons: bigint, comment: string | null = null, usdtUnits?: bigint) =>
  seedDeposit(h, {
    amount: nanotons,
    comment,
    reason,
    ...(usdtUnits !== undefined && { asset: 'USDT' as const, jetton_amount: String(usdtUnits), jetton_wallet: 'our-usdt-wallet' }),
  });

const statusOf = async (id: string) => (await h.service.db.kysely.selectFrom('deposits').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

test('the list shows the unmatched ones first with their reason; support reads but may not assign or return', async () => {
  const typo = await unmatchedDeposit('memo_invalid', 7_500_000_000n, 'ABCDEFGHJKX <b>');
  const support = await signedInOperator(h, 'support', '10.44.5.1');
  const list = await support.client.get('/deposits');
  expect(list.status).toBe(200);
  expect(list.body).toContain('<a href="/deposits" aria-current="page">Deposits</a>');
  expect(list.body.indexOf('id="unmatched-heading"')).toBeLessThan(list.body.indexOf('id="settled-heading"'));
  expect(list.body).toContain('memo mistyped (wrong shape or check character)');
  expect(list.body).toContain('7.5 TON');
  // The comment is chain data: escaped.
  expect(list.body).toContain('ABCDEFGHJKX &lt;b&gt;');
  expect(list.body).toContain(`href="/deposits/${typo.id}"`);

  const page = await support.client.get(`/deposits/${typo.id}`);
  expect(page.status).toBe(200);
  expect(page.body).toContain(typo.txHash);
  expect(page.body).not.toContain(`action="/deposits/${typo.id}/assign"`);
  const account = await h.account({ live: '1' });
  for (const action of ['assign', 'return']) {
    const refused = await support.client.post(`/deposits/${typo.id}/${action}`, {
      account: account.accountId,
      reason: 'support tries',
      code: await totpCode(support.secret, 1),
      _csrf: page.csrf as string,
    });
    expect(refused.status, action).toBe(403);
    expect(refused.body).toContain('Admins only');
  }
  expect(await statusOf(typo.id)).toBe('unmatched');
  expect((await balanceOf(h, account.liveKey)).value).toBe('1');
  expect((await support.client.get('/deposits/dep_nonexistent00000000')).status).toBe(404);
});

test('an admin assigns by deposit memo with the code again; refusals change nothing; a second assign is told it is done', async () => {
  const deposit = await unmatchedDeposit('memo_invalid', 1_500_000_000n);
  const account = await h.account({ live: '10' });
  const memo = await depositMemo(h.service.db, account.accountId);
  const admin = await signedInOperator(h, 'admin', '10.44.5.2');
  const page = await admin.client.get(`/deposits/${deposit.id}`);
  expect(page.body).toContain(`action="/deposits/${deposit.id}/assign"`);
  const form = { account: memo.toLowerCase(), reason: 'typo in memo, ticket 12', _csrf: page.csrf as string };
  const url = `/deposits/${deposit.id}/assign`;

  const wrongCode = await admin.client.post(url, { ...form, code: '000000' });
  expect(wrongCode.status).toBe(401);
  expect(wrongCode.body).toContain('Nothing was moved');
  const unknown = await admin.client.post(url, { ...form, account: 'nobody@example.com', code: '000000' });
  expect(unknown.status).toBe(400);
  expect(unknown.body).toContain('No account has the deposit memo or e-mail');
  const noReason = await admin.client.post(url, { ...form, reason: '  ', code: '000000' });
  expect(noReason.status).toBe(400);
  const noCsrf = await admin.client.post(url, { ...form, _csrf: 'forged', code: await totpCode(admin.secret, 1) });
  expect(noCsrf.status).toBe(403);
  expect(await statusOf(deposit.id)).toBe('unmatched');
  expect((await balanceOf(h, account.liveKey)).value).toBe('10');

  const assigned = await admin.client.post(url, { ...form, code: await totpCode(admin.secret, 1) });
  expect(assigned.location).toBe(`/deposits/${deposit.id}?notice=assigned`);
  expect((await balanceOf(h, account.liveKey)).value).toBe('11.5');
  const after = await admin.client.get(assigned.location as string);
  expect(after.body).toContain('The deposit was credited to the account');
  expect(after.body).toContain('data-testid="settled"');
  expect(after.body).not.toContain(`action="${url}"`);

  // Another admin, with a good code of their own: told it is done; nothing moves twice.
  const other = await signedInOperator(h, 'admin', '10.44.5.3');
  const otherCsrf = (await other.client.get(`/deposits/${deposit.id}`)).csrf as string;
  const again = await other.client.post(url, { ...form, _csrf: otherCsrf, code: await totpCode(other.secret, 1) });
  expect(again.status).toBe(409);
  expect(again.body).toContain('already credited to');
  expect(again.body).toContain(account.accountId);
  const returnAfter = await other.client.post(`/deposits/${deposit.id}/return`, { reason: 'too late', _csrf: otherCsrf });
  expect(returnAfter.status).toBe(409);
  expect((await balanceOf(h, account.liveKey)).value).toBe('11.5');
  expect(await statusOf(deposit.id)).toBe('credited');

  const rows = await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'deposit.assign', limit: 5 });
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason, r.details.tx_hash, r.details.amount])).toEqual([
    [admin.email, 'console', admin.operatorId, '10.44.5.2', 'typo in memo, ticket 12', deposit.txHash, '1.5'],
  ]);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});

test("an admin assigns by the owner's e-mail", async () => {
  const deposit = await unmatchedDeposit('no_comment', 2_000_000_000n);
  const account = await h.account({ live: '1' });
  const email = (await h.service.db.kysely.selectFrom('accounts').select('email').where('id', '=', account.accountId).executeTakeFirstOrThrow()).email;
  const admin = await signedInOperator(h, 'admin', '10.44.5.4');
  const page = await admin.client.get(`/deposits/${deposit.id}`);
  const assigned = await admin.client.post(`/deposits/${deposit.id}/assign`, {
    account: email.toUpperCase(),
    reason: 'forgot the memo, ticket 13',
    code: await totpCode(admin.secret, 1),
    _csrf: page.csrf as string,
  });
  expect(assigned.location).toBe(`/deposits/${deposit.id}?notice=assigned`);
  expect((await balanceOf(h, account.liveKey)).value).toBe('3');
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});

test('an admin records a return with a reason: no balance changes, audited, once', async () => {
  const deposit = await unmatchedDeposit('memo_unknown', 2_000_000_000n);
  const admin = await signedInOperator(h, 'admin', '10.44.5.5');
  const page = await admin.client.get(`/deposits/${deposit.id}`);
  const url = `/deposits/${deposit.id}/return`;
  const noReason = await admin.client.post(url, { reason: '', _csrf: page.csrf as string });
  expect(noReason.status).toBe(400);
  expect(await statusOf(deposit.id)).toBe('unmatched');
  const returned = await admin.client.post(url, { reason: 'sent back, ticket 31', _csrf: page.csrf as string });
  expect(returned.location).toBe(`/deposits/${deposit.id}?notice=returned`);
  expect(await statusOf(deposit.id)).toBe('returned');
  const again = await admin.client.post(url, { reason: 'twice', _csrf: page.csrf as string });
  expect(again.status).toBe(409);
  expect(again.body).toContain('already recorded as returned');
  const account = await h.account({ live: '3' });
  const assign = await admin.client.post(`/deposits/${deposit.id}/assign`, {
    account: account.accountId,
    reason: 'after the return',
    code: await totpCode(admin.secret, 1),
    _csrf: page.csrf as string,
  });
  expect(assign.status).toBe(409);
  expect((await balanceOf(h, account.liveKey)).value).toBe('3');

  const rows = (await listAudit(h.service.db.kysely, { action: 'deposit.return', limit: 20 })).filter((r) => r.details.tx_hash === deposit.txHash);
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason, r.details.amount])).toEqual([
    [admin.email, 'console', admin.operatorId, '10.44.5.5', 'sent back, ticket 31', '2'],
  ]);
  const list = await admin.client.get('/deposits');
  expect(list.body).not.toContain(`href="/deposits/${deposit.id}">Settle`);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});

test('a USDT deposit is converted at the rate of the moment it is assigned, less the spread', async () => {
  // 10 USDT (6 decimals), the TON attached to the notification 0.05.
  const deposit = await unmatchedDeposit('memo_unknown', 50_000_000n, null, 10_000_000n);
  const account = await h.account({ live: '1' });
  const admin = await signedInOperator(h, 'admin', '10.44.5.6');
  const page = await admin.client.get(`/deposits/${deposit.id}`);
  expect(page.body).toContain('data-testid="deposit-amount">10 USDT<');
  h.setTonUsdRate('2.5');
  try {
    const assigned = await admin.client.post(`/deposits/${deposit.id}/assign`, {
      account: account.accountId,
      reason: 'USDT without memo, ticket 14',
      code: await totpCode(admin.secret, 1),
      _csrf: page.csrf as string,
    });
    expect(assigned.location).toBe(`/deposits/${deposit.id}?notice=assigned`);
  } finally {
    h.setTonUsdRate('3');
  }
  // 10 USDT less 1 % at 2.5 USD/TON: 3.96 TON.
  expect((await balanceOf(h, account.liveKey)).value).toBe('4.96');
  const row = await h.service.db.kysely.selectFrom('deposits').select(['status', 'rate', 'amount']).where('id', '=', deposit.id).executeTakeFirstOrThrow();
  expect(row).toMatchObject({ status: 'credited', rate: '2.5' });
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
