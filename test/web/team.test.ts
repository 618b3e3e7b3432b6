import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { hashSecret } from '../../src/accounts/secrets.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * Teams, roles, two-factor sign-in and the activity log, through the dashboard's HTTP forms on
 * the real database (docs/dashboard.md, "Team and roles", "Two-factor sign-in", "Activity").
 * TOTP codes are computed from the secret the page shows, one time step later each time (the
 * server accepts one step of drift and each step once).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const steps = new Map<string, number>();
/** A code for a time step after every code of this secret used so far. */
async function nextCode(secret: string): Promise<string> {
  const now = Math.floor(Date.now() / 30_000);
  const step = Math.max((steps.get(secret) ?? 0) + 1, now - 1);
  if (step > now + 1) throw new Error('out of usable time steps in this 30 s window');
  steps.set(secret, step);
  return generate({ secret, epoch: step * 30 });
}

const secretOf = (body: string) => /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(body)?.[1];

async function enrol(client: WebClient): Promise<{ secret: string; recovery: string[] }> {
  const page = await client.get('/account/two-factor');
  expect(page.status).toBe(200);
  const secret = secretOf(page.body) as string;
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  const qr = await client.get('/account/two-factor/qr.svg');
  expect(qr.status).toBe(200);
  expect(qr.body).toContain('<svg');
  const wrong = await client.post('/account/two-factor', { code: '000000', _csrf: page.csrf as string });
  expect(wrong.status).toBe(400);
  const done = await client.post('/account/two-factor', { code: await nextCode(secret), _csrf: page.csrf as string });
  expect(done.status, done.body.slice(0, 300)).toBe(200);
  const recovery = [...done.body.matchAll(/<li><code>([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((m) => m[1] as string);
  expect(recovery).toHaveLength(10);
  return { secret, recovery };
}

async function invite(owner: WebClient, email: string, role: string): Promise<string> {
  const page = await owner.submit('/team', { email, role }, '/team/invite');
  expect(page.status, page.body.slice(0, 500)).toBe(200);
  const url = /id="invite-link"[^>]*>([^<]+)</.exec(page.body)?.[1];
  expect(url).toBeTruthy();
  return new URL(url as string).pathname;
}

async function join(path: string, email: string, ip: string): Promise<WebClient> {
  const client = new WebClient(h, ip);
  const page = await client.get(path);
  expect(page.status).toBe(200);
  expect(page.body).toContain(email);
  const joined = await client.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: page.csrf as string });
  expect(joined.status, joined.body.slice(0, 300)).toBe(303);
  expect(client.session).toBeTruthy();
  return client;
}

const personId = async (email: string) => (await h.service.db.kysely.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
const activity = async (accountId: string) =>
  (await h.service.db.kysely.selectFrom('audit_log').select(['actor', 'action', 'source']).where('account_id', '=', accountId).orderBy('created_at').execute()).map(
    (r) => `${r.actor} ${r.action}`,
  );

describe('two-factor sign-in', () => {
  test('enrol from the shown secret; sign in with a code and with a recovery code, each once; wrong codes are throttled', async () => {
    const { client, email } = await signedUp(h, '10.35.0.1');
    const { secret, recovery } = await enrol(client);
    // Stored: the recovery codes only as hashes.
    const stored = await h.service.db.kysely
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('person_id', '=', await personId(email))
      .execute();
    expect(stored).toHaveLength(10);
    expect(stored.map((r) => r.code_hash)).not.toContain(recovery[0]);
    await client.logOut();

    // The password alone reaches only the code form.
    const login = await client.logIn(email);
    expect(login.location).toBe('/login/code');
    expect((await client.get('/')).location).toBe('/login/code');
    expect((await client.get('/keys')).location).toBe('/login/code');
    const code = await nextCode(secret);
    const signedIn = await client.submit('/login/code', { code });
    expect(signedIn.status).toBe(303);
    expect((await client.get('/')).status).toBe(200);
    await client.logOut();

    // The same code again: refused (a code works once).
    await client.logIn(email);
    expect((await client.submit('/login/code', { code })).status).toBe(401);
    // A recovery code works, once.
    const withRecovery = await client.submit('/login/code', { code: recovery[0] as string });
    expect(withRecovery.status).toBe(303);
    await client.logOut();
    await client.logIn(email);
    expect((await client.submit('/login/code', { code: recovery[0] as string })).status).toBe(401);

    // Wrong codes count with failed passwords: after 5 the e-mail is throttled, even with a right code.
    for (let i = 0; i < 4; i++) expect((await client.submit('/login/code', { code: '123456' })).status).toBe(401);
    const throttled = await client.submit('/login/code', { code: await nextCode(secret) });
    expect(throttled.status).toBe(429);
    expect((await client.get('/')).location).toBe('/login/code');
  });
});

test('turning two-factor off takes a code, ends the sessions, and the password alone signs in again', async () => {
  const { client, email } = await signedUp(h, '10.35.0.7');
  const { secret } = await enrol(client);
  const wrong = await client.submit('/account', { code: '000000' }, '/account/two-factor/disable');
  expect(wrong.status).toBe(401);
  expect(wrong.body).toContain('That code is not right, or was already used. Two-factor sign-in is still on.');
  expect((await client.get('/account')).body).toContain('Two-factor sign-in is <strong>on</strong>');
  const off = await client.submit('/account', { code: await nextCode(secret) }, '/account/two-factor/disable');
  expect(off.location).toBe('/login?notice=logged_out');
  expect((await client.get('/')).location).toMatch(/^\/login/);
  expect((await client.logIn(email)).location).toBe('/');
  const accountId = await accountIdOf(h, email);
  expect(await activity(accountId)).toEqual(expect.arrayContaining([`${email} two_factor.enable`, `${email} two_factor.disable`]));
});

test('giving the code again (turning two-factor on, a step-up) keeps the session ending 7 days after sign-in', async () => {
  const { client } = await signedUp(h, '10.35.0.9');
  const expiry = async () =>
    Number(
      (
        await h.service.db.kysely
          .selectFrom('dashboard_sessions')
          .select('expires_at')
          .where('id_hash', '=', hashSecret(client.session as string))
          .executeTakeFirstOrThrow()
      ).expires_at,
    );
  // Backdated a day, as a session signed in yesterday.
  await h.service.db.kysely
    .updateTable('dashboard_sessions')
    .set({ expires_at: Date.now() + 6 * 24 * 3600_000 })
    .where('id_hash', '=', hashSecret(client.session as string))
    .execute();
  const signedInEnd = await expiry();
  const { secret } = await enrol(client);
  expect(await expiry()).toBe(signedInEnd);
  const confirmed = await client.submit('/account/confirm?next=/keys', { code: await nextCode(secret), next: '/keys' }, '/account/confirm');
  expect(confirmed.location).toBe('/keys');
  expect(await expiry()).toBe(signedInEnd);
});

test('a member of an account that requires two-factor cannot turn it off from another of their accounts', async () => {
  const { client, email } = await signedUp(h, '10.35.0.10');
  const ownAccount = await accountIdOf(h, email);
  const { secret } = await enrol(client);
  const { client: other, email: otherEmail } = await signedUp(h, '10.35.0.11');
  const path = await invite(other, email, 'viewer');
  const accept = await client.get(path);
  expect((await client.post(path, { _csrf: accept.csrf as string })).location).toBe('/?notice=joined');
  await h.service.db.kysely.updateTable('accounts').set({ two_factor_required_at: Date.now() }).where('email', '=', otherEmail).execute();
  // Looking at their own account, which does not require it.
  expect((await client.submit('/account', { account: ownAccount }, '/account/switch')).location).toBe('/?notice=switched');
  const page = await client.get('/account');
  expect(page.body).toContain(`Two-factor sign-in cannot be turned off: ${otherEmail} requires it of every member.`);
  expect(page.body).not.toContain('action="/account/two-factor/disable"');
  const refused = await client.post('/account/two-factor/disable', { code: await nextCode(secret), _csrf: page.csrf as string });
  expect(refused.status).toBe(409);
  expect(refused.body).toContain(`Two-factor sign-in cannot be turned off: ${otherEmail} requires it of every member.`);
  expect((await h.service.db.kysely.selectFrom('people').select('totp_enabled_at').where('email', '=', email).executeTakeFirstOrThrow()).totp_enabled_at).not.toBeNull();
  expect((await client.get('/account')).status).toBe(200);
});

test('a set-password link of a person whose only account is disabled sets the password but signs nobody in', async () => {
  const { client, email } = await signedUp(h, '10.35.0.8');
  const accountId = await accountIdOf(h, email);
  await h.service.db.kysely.updateTable('accounts').set({ status: 'disabled' }).where('id', '=', accountId).execute();
  const link = await issuePasswordLink(h.service.db, email);
  const page = await client.submit(`/set-password/${link.token}`, { password: 'another long password', password_again: 'another long password' });
  expect(page.status).toBe(403);
  expect(page.body).toContain('disabled');
  // The old session ended with the password change, and no new one started.
  expect((await client.get('/')).location).toMatch(/^\/login/);
  expect(await h.service.db.kysely.selectFrom('dashboard_sessions').select('id_hash').where('account_id', '=', accountId).execute()).toEqual([]);
});

describe('teammates and roles', () => {
  let owner: WebClient;
  let ownerEmail: string;
  let accountId: string;
  let developer: WebClient;
  let viewer: WebClient;
  const developerEmail = newEmail('dev');
  const viewerEmail = newEmail('viewer');

  beforeAll(async () => {
    ({ client: owner, email: ownerEmail } = await signedUp(h, '10.35.1.1'));
    accountId = await accountIdOf(h, ownerEmail);
    developer = await join(await invite(owner, developerEmail, 'developer'), developerEmail, '10.35.1.2');
    viewer = await join(await invite(owner, viewerEmail, 'viewer'), viewerEmail, '10.35.1.3');
  });

  test('an invite works once and each joins with its role', async () => {
    const path = await invite(owner, newEmail('once'), 'viewer');
    await join(path, '', '10.35.1.9');
    expect((await new WebClient(h, '10.35.1.10').get(path)).status).toBe(404);
    const roles = await h.service.db.kysely
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['p.email', 'm.role'])
      .where('m.account_id', '=', accountId)
      .execute();
    expect(roles).toEqual(
      expect.arrayContaining([
        { email: ownerEmail, role: 'owner' },
        { email: developerEmail, role: 'developer' },
        { email: viewerEmail, role: 'viewer' },
      ]),
    );
  });

  test('a developer has keys, webhooks, orders and test funds, but not the team or activity', async () => {
    for (const path of ['/', '/keys', '/test/webhooks', '/orders', '/balance', '/top-up']) expect((await developer.get(path)).status, path).toBe(200);
    expect((await developer.submit('/test/top-up', { amount: '5' })).status).toBe(303);
    for (const path of ['/team', '/activity', '/activity.csv']) expect((await developer.get(path)).status, path).toBe(403);
    // Posted directly with a valid token: 403, and nothing changes.
    const csrf = (await developer.get('/')).csrf as string;
    const invites = async () => (await h.service.db.kysely.selectFrom('team_invites').select('token_hash').where('account_id', '=', accountId).execute()).length;
    const before = await invites();
    expect((await developer.post('/team/invite', { email: newEmail('x'), role: 'owner', _csrf: csrf })).status).toBe(403);
    expect((await developer.post(`/team/members/${await personId(viewerEmail)}/remove`, { _csrf: csrf })).status).toBe(403);
    expect((await developer.post(`/team/members/${await personId(developerEmail)}/role`, { role: 'owner', _csrf: csrf })).status).toBe(403);
    expect((await developer.post('/team/two-factor', { required: 'yes', _csrf: csrf })).status).toBe(403);
    expect(await invites()).toBe(before);
    const roles = await h.service.db.kysely
      .selectFrom('memberships')
      .select('role')
      .where('account_id', '=', accountId)
      .where('person_id', '=', await personId(developerEmail))
      .execute();
    expect(roles).toEqual([{ role: 'developer' }]);
  });

  test('a viewer reads balances, orders, history and deposits; every form and key page answers 403 and changes nothing', async () => {
    for (const path of ['/', '/test', '/orders', '/test/orders', '/balance', '/top-up', '/test/top-up', '/account']) expect((await viewer.get(path)).status, path).toBe(200);
    const home = await viewer.get('/');
    expect(home.body).not.toContain('href="/keys"');
    for (const path of ['/keys', '/test/keys', '/keys/reissue?mode=test', '/webhooks', '/test/webhooks', '/team', '/activity'])
      expect((await viewer.get(path)).status, path).toBe(403);
    const csrf = home.csrf as string;
    const keysBefore = await h.service.db.kysely.selectFrom('api_keys').select(['id', 'revoked_at']).where('account_id', '=', accountId).execute();
    const balance = async () =>
      (await h.service.db.kysely.selectFrom('balances').select('available').where('account_id', '=', accountId).where('mode', '=', 'test').executeTakeFirstOrThrow()).available;
    const balanceBefore = await balance();
    for (const [url, form] of [
      ['/test/top-up', { amount: '100' }],
      ['/keys/reissue', { mode: 'test', replaces: '' }],
      ['/test/keys/reissue', { mode: 'live', replaces: '' }],
      ['/test/webhooks', { url: 'http://example.com/hook' }],
      ['/team/invite', { email: newEmail('v'), role: 'owner' }],
    ] as const) {
      const page = await viewer.post(url, { ...form, _csrf: csrf });
      expect(page.status, url).toBe(403);
      expect(page.body).not.toMatch(/sk_(live|test)_[A-Za-z0-9]{20,}/);
    }
    expect(await h.service.db.kysely.selectFrom('api_keys').select(['id', 'revoked_at']).where('account_id', '=', accountId).execute()).toEqual(keysBefore);
    expect(await balance()).toBe(balanceBefore);
    expect(await h.service.db.kysely.selectFrom('webhook_endpoints').select('id').where('account_id', '=', accountId).execute()).toEqual([]);
  });

  test('the last owner cannot be removed or demoted', async () => {
    const me = await personId(ownerEmail);
    const removed = await owner.submit('/team', {}, `/team/members/${me}/remove`);
    expect(removed.status).toBe(200);
    expect(removed.body).toContain('at least one owner');
    const demoted = await owner.submit('/team', { role: 'viewer' }, `/team/members/${me}/role`);
    expect(demoted.body).toContain('at least one owner');
    expect((await owner.get('/team')).status).toBe(200);
  });

  test('removing a member ends their session at once: the old cookie is refused', async () => {
    const cookie = viewer.session as string;
    expect((await viewer.get('/')).status).toBe(200);
    const removed = await owner.submit('/team', {}, `/team/members/${await personId(viewerEmail)}/remove`);
    expect(removed.location).toBe('/team?notice=removed');
    const replay = new WebClient(h, '10.35.1.3');
    replay.cookies.set('sp_session', cookie);
    const page = await replay.get('/');
    expect(page.status).toBe(303);
    expect(page.location).toMatch(/^\/login/);
    expect(await h.service.db.kysely.selectFrom('dashboard_sessions').select('id_hash').where('id_hash', '=', hashSecret(cookie)).execute()).toEqual([]);
  });

  test('the activity log shows each step with the right actor, to owners, and as CSV', async () => {
    const log = await activity(accountId);
    expect(log).toEqual(
      expect.arrayContaining([
        `${ownerEmail} team.invite`,
        `${developerEmail} team.join`,
        `${viewerEmail} team.join`,
        `${developerEmail} dashboard.test_funds`,
        `${ownerEmail} team.remove`,
      ]),
    );
    const page = await owner.get('/activity');
    expect(page.status).toBe(200);
    expect(page.body).toContain('team.remove');
    expect(page.body).toContain('10.35.1.2');
    const csv = await owner.get('/activity.csv');
    expect(csv.status).toBe(200);
    expect(csv.body.split('\r\n')[0]).toBe('id,time,actor,source,action,details,ip');
    expect(csv.body).toContain(`${developerEmail},dashboard,dashboard.test_funds`);
  });

  test('a person in two accounts switches between them; roles follow the account', async () => {
    const { client: other, email: otherEmail } = await signedUp(h, '10.35.1.20');
    const path = await invite(other, developerEmail, 'viewer');
    // The developer already signs in: the invite asks them to be signed in as that address.
    const page = await developer.get(path);
    expect(page.body).toContain('Join the account');
    expect((await developer.post(path, { _csrf: page.csrf as string })).status).toBe(303);
    expect((await developer.get('/keys')).status).toBe(403);
    const otherId = await accountIdOf(h, otherEmail);
    const mine = (await developer.get('/account')).body;
    expect(mine).toContain(`switch-${accountId}`);
    expect((await developer.submit('/account', { account: accountId }, '/account/switch')).status).toBe(303);
    expect((await developer.get('/keys')).status).toBe(200);
    // Switching to an account one is not a member of does nothing.
    await developer.submit('/account', { account: 'acct_nope' }, '/account/switch');
    expect((await developer.get('/keys')).status).toBe(200);
    expect(otherId).not.toBe(accountId);
  });
});

describe('require two-factor and step-up', () => {
  test('when the owner requires it, a member must enrol first; sensitive actions ask again after 10 minutes', async () => {
    const { client: owner, email: ownerEmail } = await signedUp(h, '10.35.2.1');
    const accountId = await accountIdOf(h, ownerEmail);
    // Not before the owner has it.
    expect((await owner.submit('/team', { required: 'yes' }, '/team/two-factor')).location).toBe('/team?notice=need_own_2fa');
    const { secret } = await enrol(owner);
    const member = newEmail('member');
    const memberClient = await join(await invite(owner, member, 'developer'), member, '10.35.2.2');
    expect((await owner.submit('/team', { required: 'yes' }, '/team/two-factor')).location).toBe('/team?notice=required_on');
    expect((await memberClient.get('/keys')).location).toBe('/account/two-factor?notice=required');
    expect((await memberClient.get('/account/two-factor')).status).toBe(200);

    // Step-up: the second factor given more than 10 minutes ago.
    await h.service.db.kysely
      .updateTable('dashboard_sessions')
      .set({ second_factor_at: Date.now() - 11 * 60_000 })
      .where('id_hash', '=', hashSecret(owner.session as string))
      .execute();
    expect((await owner.get('/keys/reissue?mode=live')).location).toBe(`/account/confirm?next=${encodeURIComponent('/keys/reissue?mode=live')}`);
    expect((await owner.get('/keys/reissue?mode=test')).status).toBe(200);
    const add = await owner.submit('/test/webhooks', { url: 'http://127.0.0.1:9/hook' });
    expect(add.status).toBe(403);
    expect(add.body).toContain('Confirm it is you');
    expect(await h.service.db.kysely.selectFrom('webhook_endpoints').select('id').where('account_id', '=', accountId).execute()).toEqual([]);
    const invited = await owner.submit('/team', { email: newEmail('late'), role: 'viewer' }, '/team/invite');
    expect(invited.status).toBe(403);
    const confirmed = await owner.submit('/account/confirm?next=/keys', { code: await nextCode(secret), next: '/keys' }, '/account/confirm');
    expect(confirmed.location).toBe('/keys');
    expect((await owner.get('/keys/reissue?mode=live')).status).toBe(200);
  });
});
