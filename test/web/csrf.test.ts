import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * CSRF: every state-changing form carries a token bound to the browser's session (or, signed
 * out, to its pre-session cookie). A missing, wrong, or other browser's token is a 403 that
 * changes nothing, and so is any form a browser marks as cross-site.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const activeKeyIds = async (accountId: string) =>
  (await h.service.db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', accountId).where('revoked_at', 'is', null).execute()).map((r) => r.id).sort();

describe('logged-in forms', () => {
  test('add test funds, reissue a key and log out are refused without the right token, and change nothing', async () => {
    const { client, email } = await signedUp(h, '10.1.0.1');
    const { client: other } = await signedUp(h, '10.1.0.2');
    const accountId = await accountIdOf(h, email);
    const otherToken = (await other.get('/')).csrf as string;
    const ownToken = (await client.get('/')).csrf as string;
    const keysBefore = await activeKeyIds(accountId);
    const reissueForm = await client.get('/test/keys/reissue?mode=test');
    const replaces = /name="replaces" value="([^"]+)"/.exec(reissueForm.body)?.[1] as string;

    const forms: [string, Record<string, string>][] = [
      ['/test/top-up', { amount: '100' }],
      ['/test/keys/reissue', { mode: 'test', replaces }],
      ['/keys/reissue', { mode: 'live', replaces }],
      ['/logout', {}],
    ];
    for (const [action, fields] of forms) {
      for (const [what, extra] of [
        ['no token', {}],
        ['an empty token', { _csrf: '' }],
        ['a forged token', { _csrf: 'x'.repeat(43) }],
        ["another session's token", { _csrf: otherToken }],
      ] as const) {
        const page = await client.post(action, { ...fields, ...extra });
        expect(page.status, `${action} with ${what}`).toBe(403);
        expect(page.body).toContain('This form has expired');
      }
      // The right token, but the browser says the form came from another site.
      const crossSite = await client.post(action, { ...fields, _csrf: ownToken }, { 'sec-fetch-site': 'cross-site' });
      expect(crossSite.status, `${action} cross-site`).toBe(403);
    }

    expect((await readBalance(h.service.db.kysely, { accountId, mode: 'test' }))?.available).toBe(0n);
    expect(await activeKeyIds(accountId)).toEqual(keysBefore);
    expect((await client.get('/')).status, 'still logged in').toBe(200);

    // With its token, the same form works.
    const ok = await client.post('/test/top-up', { amount: '100', _csrf: ownToken });
    expect(ok.status).toBe(303);
  });

  test('the token changes with the session: a token from before logging in again is refused', async () => {
    const { client, email } = await signedUp(h, '10.1.0.3');
    const oldToken = (await client.get('/')).csrf as string;
    await client.logOut();
    await client.logIn(email);
    const newToken = (await client.get('/')).csrf as string;
    expect(newToken).not.toBe(oldToken);
    expect((await client.post('/test/top-up', { amount: '1', _csrf: oldToken })).status).toBe(403);
  });
});

describe('signed-out forms', () => {
  test('login, sign-up and set-password need the token of this browser’s pre-session cookie', async () => {
    const { email } = await signedUp(h, '10.1.1.1');
    const attacker = new WebClient(h, '10.1.1.2');
    const attackerToken = (await attacker.get('/login')).csrf as string;

    const victim = new WebClient(h, '10.1.1.3');
    await victim.get('/login'); // has its own pre-session cookie
    for (const extra of [{}, { _csrf: attackerToken }, { _csrf: 'x'.repeat(43) }] as Record<string, string>[]) {
      const login = await victim.post('/login', { email, password: PASSWORD, ...extra });
      expect(login.status).toBe(403);
      expect(victim.session).toBeUndefined();
      const signup = await victim.post('/signup', { email: newEmail(), password: PASSWORD, ...extra });
      expect(signup.status).toBe(403);
    }

    // Without any cookie (a forged cross-site form from a fresh browser) the token cannot match.
    const fresh = new WebClient(h, '10.1.1.4');
    expect((await fresh.post('/login', { email, password: PASSWORD, _csrf: attackerToken })).status).toBe(403);

    const link = await issuePasswordLink(h.service.db, email);
    const setPassword = await victim.post(`/set-password/${link.token}`, { password: 'a brand new password', password_again: 'a brand new password', _csrf: attackerToken });
    expect(setPassword.status).toBe(403);
    // The link is still unused: the refused form did not spend it.
    const page = await victim.get(`/set-password/${link.token}`);
    expect(page.status).toBe(200);
  });
});
