import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit, recordAudit } from '../../src/audit/audit.js';
import { AUDIT_PAGE_SIZE } from '../../src/http/console/pages/audit.js';
import { consoleClient, signedInOperator, totpCode } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { signedUp } from '../support/web.js';

/**
 * The console's audit page and CSV: newest first with the operator's e-mail, IP, source,
 * action, account and reason; filtered by account, operator and action; paged without a gap
 * or a repeat (entries of one millisecond included); a formula in a reason neutralised in the
 * CSV; a bad filter refused with what is wrong; support reads it, nobody else.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

const rowIds = (body: string) => [...body.matchAll(/data-testid="audit-row" data-id="([^"]+)"/g)].map((m) => m[1]);
const olderLink = (body: string) => /href="([^"]+)" rel="next" data-testid="older"/.exec(body)?.[1]?.replace(/&amp;/g, '&');

test('a console credit shows with its operator, IP and reason; filters; CSV neutralises formulas', async () => {
  const admin = await signedInOperator(h, 'admin', '10.45.7.1');
  const support = await signedInOperator(h, 'support', '10.45.7.2');
  const account = await h.account({ live: '10' });
  const page = await admin.client.get(`/accounts/${account.accountId}`);
  const credited = await admin.client.post(`/accounts/${account.accountId}/adjust`, {
    mode: 'live',
    direction: 'credit',
    amount: '2',
    reason: '=HYPERLINK("http://evil.example","x")',
    code: await totpCode(admin.secret, 1),
    _csrf: page.csrf as string,
  });
  expect(credited.location).toBe(`/accounts/${account.accountId}?notice=credited`);
  // A CLI entry on the same account (no operator): shown with its actor.
  await h.service.db.kysely
    .transaction()
    .execute((tx) => recordAudit(tx, { actor: 'root', action: 'account.disable', accountId: account.accountId, reason: 'cli', now: Date.now() + 1000 }));

  const all = await support.client.get(`/audit?account=${account.accountId}`);
  expect(all.status, all.body.slice(0, 500)).toBe(200);
  const expected = await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 10 });
  expect(expected.map((r) => r.action)).toEqual(['account.disable', 'balance.credit']);
  expect(rowIds(all.body)).toEqual(expected.map((r) => r.id));
  const creditRow = all.body.slice(all.body.indexOf(`data-id="${expected[1]?.id}"`));
  expect(creditRow).toContain(admin.email);
  expect(creditRow).toContain('10.45.7.1');
  expect(creditRow).toContain('console');
  expect(creditRow).toContain('=HYPERLINK(&quot;http://evil.example&quot;,&quot;x&quot;)');
  expect(all.body).toContain('aria-current="page"');

  // Filters: operator (e-mail, any case), action, both with the account.
  const byOperator = await support.client.get(`/audit?account=${account.accountId}&operator=${encodeURIComponent(admin.email.toUpperCase())}`);
  expect(rowIds(byOperator.body)).toEqual([expected[1]?.id]);
  const byAction = await support.client.get(`/audit?account=${account.accountId}&action=account.disable`);
  expect(rowIds(byAction.body)).toEqual([expected[0]?.id]);
  const supportSignIns = await support.client.get(`/audit?operator=${encodeURIComponent(support.email)}&action=operator.two_factor_enable`);
  expect(rowIds(supportSignIns.body)).toHaveLength(1);
  expect(supportSignIns.body).toContain('10.45.7.2');
  // The account by e-mail too.
  const email = (await h.service.db.kysely.selectFrom('accounts').select('email').where('id', '=', account.accountId).executeTakeFirstOrThrow()).email;
  expect(rowIds((await support.client.get(`/audit?account=${encodeURIComponent(email)}`)).body)).toEqual(expected.map((r) => r.id));

  const csv = await support.client.get(`/audit.csv?account=${account.accountId}`);
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(String(csv.headers['content-disposition'])).toMatch(/^attachment; filename="starport-audit-\d{4}-\d{2}-\d{2}\.csv"$/);
  const lines = csv.body.trimEnd().split('\r\n');
  expect(lines[0]).toBe('id,time,operator,actor,source,ip,action,account,mode,order,reason,details');
  expect(lines).toHaveLength(3);
  expect(lines[1]).toMatch(new RegExp(`^${expected[0]?.id},[^,]+,,root,cli,,account.disable,${account.accountId},,,cli,`));
  expect(lines[2]).toContain(`,${admin.email},${admin.email},console,10.45.7.1,balance.credit,${account.accountId},live,,`);
  // The formula is quoted so that a spreadsheet shows it as text.
  expect(lines[2]).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
  const csvByAction = await support.client.get(`/audit.csv?account=${account.accountId}&action=balance.credit`);
  expect(csvByAction.body.trimEnd().split('\r\n')).toHaveLength(2);
});

test('paged newest first without a gap or a repeat, ties on one millisecond included', async () => {
  const support = await signedInOperator(h, 'support');
  const account = await h.account({});
  const base = Date.now() + 60_000;
  const total = AUDIT_PAGE_SIZE + 12;
  await h.service.db.kysely.transaction().execute(async (tx) => {
    // Five entries share each millisecond: the first page ends between two of one time (i 12 and 11).
    for (let i = 0; i < total; i++)
      await recordAudit(tx, { actor: 'seed', action: 'balance.credit', accountId: account.accountId, reason: `r${i}`, now: base + Math.floor(i / 5) });
  });
  const expected = (await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 1000 })).map((r) => r.id);
  expect(expected).toHaveLength(total);

  const first = await support.client.get(`/audit?account=${account.accountId}`);
  expect(rowIds(first.body)).toEqual(expected.slice(0, AUDIT_PAGE_SIZE));
  const next = olderLink(first.body);
  expect(next).toContain(`account=${account.accountId}`);
  const second = await support.client.get(next as string);
  expect(second.status).toBe(200);
  expect(rowIds(second.body)).toEqual(expected.slice(AUDIT_PAGE_SIZE));
  expect(olderLink(second.body)).toBeUndefined();
  expect(second.body).toContain('Newest entries');
  // The CSV is not paged: every entry the filters match.
  expect((await support.client.get(`/audit.csv?account=${account.accountId}`)).body.trimEnd().split('\r\n')).toHaveLength(total + 1);
});

test('bad filters are refused with what is wrong; nobody but an operator reads the log', async () => {
  const support = await signedInOperator(h, 'support');
  for (const [query, message] of [
    ['action=balance.steal', 'is not an audit action'],
    ['operator=nobody%40example.com', 'no operator has the e-mail'],
    ['account=acct_0000000000000000000000', 'no account has the id or e-mail'],
    ['before=yesterday', 'This page link is damaged'],
  ] as const) {
    for (const path of ['/audit', '/audit.csv']) {
      const refused = await support.client.get(`${path}?${query}`);
      expect(refused.status, `${path}?${query}`).toBe(400);
      expect(refused.body).toContain(message);
      expect(refused.headers['content-type']).toContain('text/html');
    }
  }
  const { client } = await signedUp(h);
  const anonymous = consoleClient(h);
  for (const path of ['/audit', '/audit.csv']) {
    expect((await anonymous.get(path)).location).toMatch(/^\/login/);
    expect((await anonymous.get(path, { cookie: `sp_session=${client.session}; sp_operator=${client.session}` })).location).toMatch(/^\/login/);
  }
});
