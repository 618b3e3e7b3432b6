import { generate } from 'otplib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { signedInOperator } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, signedUp, WebClient } from '../support/web.js';

/**
 * Support resets a member's two-factor from the account page (the function of `starport
 * account 2fa reset`): the person's two-factor is off and their sessions end, audited with the
 * operator, IP and reason; a blank reason or someone not a member of the account changes nothing.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

test('support resets a member’s two-factor with a reason; bad input changes nothing', async () => {
  const { client, email } = await signedUp(h, '10.46.1.1');
  const setup = await client.get('/account/two-factor');
  const secret = /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(setup.body)?.[1] as string;
  const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) });
  expect((await client.post('/account/two-factor', { code, _csrf: setup.csrf as string })).status).toBe(200);
  const accountId = await accountIdOf(h, email);
  const other = await signedUp(h);

  const support = await signedInOperator(h, 'support', '10.46.2.2');
  const page = await support.client.get(`/accounts/${accountId}`);
  expect(page.status).toBe(200);
  expect(page.body).toContain('data-testid="member"');
  expect(page.body).toContain(`action="/accounts/${accountId}/two-factor-reset"`);
  const twoFactorOn = async () =>
    (await h.service.db.kysely.selectFrom('people').select('totp_enabled_at').where('email', '=', email).executeTakeFirstOrThrow()).totp_enabled_at !== null;

  const noReason = await support.client.post(`/accounts/${accountId}/two-factor-reset`, { email, reason: '  ', _csrf: page.csrf as string });
  expect(noReason.status).toBe(400);
  expect(noReason.body).toContain('Give a reason');
  const notMember = await support.client.post(`/accounts/${accountId}/two-factor-reset`, { email: other.email, reason: 'x', _csrf: page.csrf as string });
  expect(notMember.status).toBe(400);
  expect(notMember.body).toContain('Choose a member of this account');
  const noCsrf = await support.client.post(`/accounts/${accountId}/two-factor-reset`, { email, reason: 'x', _csrf: 'forged' });
  expect(noCsrf.status).toBe(403);
  expect(await twoFactorOn()).toBe(true);
  expect((await client.get('/')).status).toBe(200);

  const reset = await support.client.post(`/accounts/${accountId}/two-factor-reset`, {
    email: email.toUpperCase(),
    reason: 'lost phone, checked by call',
    _csrf: page.csrf as string,
  });
  expect(reset.location).toBe(`/accounts/${accountId}?notice=two-factor`);
  expect(await twoFactorOn()).toBe(false);
  expect((await client.get('/')).location).toMatch(/^\/login/);
  expect((await new WebClient(h, '10.46.1.1').logIn(email)).location).toBe('/');
  const rows = await listAudit(h.service.db.kysely, { accountId, action: 'two_factor.reset', limit: 5 });
  expect(rows.map((r) => [r.actor, r.source, r.operatorId, r.ip, r.reason, r.details])).toEqual([
    [support.email, 'console', support.operatorId, '10.46.2.2', 'lost phone, checked by call', { email, was_on: true }],
  ]);
});
