import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { signedInOperator } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, signedUp } from '../support/web.js';

/**
 * Support issues a member's set-password link from the account page (the function of
 * `starport account invite`): shown once, it opens the dashboard's set-password form, audited
 * with the operator, IP and reason but never the token; a non-member, a blank reason or an
 * unset PUBLIC_URL issues nothing.
 */
let h: Harness;
let bare: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0', PUBLIC_URL: 'https://dash.example.com' });
  bare = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

const tokens = async (harness: Harness, email: string) =>
  (await harness.service.db.kysely.selectFrom('password_tokens as t').innerJoin('people as p', 'p.id', 't.person_id').select('t.token_hash').where('p.email', '=', email).execute())
    .length;

test('support issues a set-password link that works, audited without the token', async () => {
  const { email } = await signedUp(h);
  const accountId = await accountIdOf(h, email);
  const other = await signedUp(h);
  const support = await signedInOperator(h, 'support', '10.47.1.1');
  const page = await support.client.get(`/accounts/${accountId}`);
  expect(page.body).toContain(`action="/accounts/${accountId}/password-link"`);

  const before = await tokens(h, email);
  const noReason = await support.client.post(`/accounts/${accountId}/password-link`, { email, reason: '', _csrf: page.csrf as string });
  expect(noReason.status).toBe(400);
  const notMember = await support.client.post(`/accounts/${accountId}/password-link`, { email: other.email, reason: 'asked', _csrf: page.csrf as string });
  expect(notMember.status).toBe(400);
  expect(notMember.body).toContain('No link was issued');
  expect(await tokens(h, email)).toBe(before);
  expect(await tokens(h, other.email)).toBe(0);

  const issued = await support.client.post(`/accounts/${accountId}/password-link`, { email, reason: 'forgot password, checked by call', _csrf: page.csrf as string });
  expect(issued.status).toBe(200);
  const url = /data-testid="password-link">([^<]+)</.exec(issued.body)?.[1] as string;
  expect(url).toMatch(/^https:\/\/dash\.example\.com\/set-password\/\S+$/);
  const form = await h.inject({ method: 'GET', url: new URL(url).pathname });
  expect(form.statusCode).toBe(200);
  expect(form.body).toContain('name="password"');

  const rows = await listAudit(h.service.db.kysely, { accountId, action: 'account.password_link', limit: 5 });
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason, r.details])).toEqual([
    [support.email, 'console', support.operatorId, '10.47.1.1', 'forgot password, checked by call', { email, link_account_id: accountId }],
  ]);
  const token = url.slice(url.lastIndexOf('/') + 1);
  expect(JSON.stringify(rows)).not.toContain(token);
});

test('without PUBLIC_URL no link is issued', async () => {
  const { email } = await signedUp(bare);
  const accountId = await accountIdOf(bare, email);
  const support = await signedInOperator(bare, 'support');
  const page = await support.client.get(`/accounts/${accountId}`);
  const before = await tokens(bare, email);
  const refused = await support.client.post(`/accounts/${accountId}/password-link`, { email, reason: 'asked', _csrf: page.csrf as string });
  expect(refused.status).toBe(409);
  expect(refused.body).toContain('PUBLIC_URL is not set');
  expect(await tokens(bare, email)).toBe(before);
  expect(await listAudit(bare.service.db.kysely, { accountId, action: 'account.password_link', limit: 5 })).toEqual([]);
});
