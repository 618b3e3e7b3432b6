import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * Suite 4, the dashboard's part: every dashboard page and form × every team role (owner,
 * developer, viewer; docs/dashboard.md, "Team and roles"). Each is requested as a member of that
 * role with a valid session and CSRF token, as a browser would or as a direct post. A forbidden
 * one must answer 403 and change nothing of the account (keys, webhook endpoints, members,
 * invites, balances, settings); an allowed one must get past the role check. The table below
 * is written out by hand, not derived from the server's rules.
 */
type Role = 'owner' | 'developer' | 'viewer';
const ALL: Role[] = ['owner', 'developer', 'viewer'];
const BUILDERS: Role[] = ['owner', 'developer'];
const OWNER: Role[] = ['owner'];

/** [method, path, form, roles allowed]. {endpoint}, {target}, {me}, {account} are filled in. */
const ROUTES: [string, string, Record<string, string>, Role[]][] = [
  ['GET', '/', {}, ALL],
  ['GET', '/test', {}, ALL],
  ['GET', '/top-up', {}, ALL],
  ['GET', '/test/top-up', {}, ALL],
  ['GET', '/orders', {}, ALL],
  ['GET', '/test/orders', {}, ALL],
  ['GET', '/balance', {}, ALL],
  ['GET', '/test/balance/history.csv', {}, ALL],
  ['GET', '/guide', {}, ALL],
  ['GET', '/account', {}, ALL],
  ['GET', '/account/two-factor', {}, ALL],
  ['GET', '/keys', {}, BUILDERS],
  ['GET', '/test/keys', {}, BUILDERS],
  ['GET', '/test/keys/reissue?mode=test', {}, BUILDERS],
  ['GET', '/keys/reissue?mode=live', {}, BUILDERS],
  ['GET', '/webhooks', {}, BUILDERS],
  ['GET', '/test/webhooks', {}, BUILDERS],
  ['GET', '/test/webhooks/{endpoint}', {}, BUILDERS],
  ['GET', '/team', {}, OWNER],
  ['GET', '/activity', {}, OWNER],
  ['GET', '/activity.csv', {}, OWNER],
  ['POST', '/account/switch', { account: '{account}' }, ALL],
  ['POST', '/test/top-up', { amount: '1' }, BUILDERS],
  ['POST', '/test/keys/reissue', { mode: 'test', replaces: 'key_stale' }, BUILDERS],
  ['POST', '/keys/reissue', { mode: 'live', replaces: 'key_stale' }, BUILDERS],
  ['POST', '/test/webhooks', { url: 'http://127.0.0.1:9/hook' }, BUILDERS],
  ['POST', '/test/webhooks/{endpoint}/test', {}, BUILDERS],
  ['POST', '/test/webhooks/{endpoint}/enable', {}, BUILDERS],
  ['POST', '/test/webhooks/{endpoint}/rotate', {}, BUILDERS],
  ['POST', '/test/webhooks/{endpoint}/messages/msg_x/redeliver', {}, BUILDERS],
  ['POST', '/team/invite', { email: 'new-{role}@example.com', role: 'viewer' }, OWNER],
  ['POST', '/team/members/{target}/role', { role: 'developer' }, OWNER],
  ['POST', '/team/two-factor', { required: 'no' }, OWNER],
  ['POST', '/team/invites/{invite}/revoke', {}, OWNER],
  ['POST', '/test/webhooks/{endpoint}/delete', {}, BUILDERS],
  ['POST', '/team/members/{target}/remove', {}, OWNER],
];

let h: Harness;
let accountId: string;
const clients = new Map<Role, WebClient>();
const ids: Record<string, string> = {};

async function join(owner: WebClient, email: string, role: string, ip: string): Promise<WebClient> {
  const page = await owner.submit('/team', { email, role }, '/team/invite');
  const path = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(page.body)?.[1] as string).pathname;
  const client = new WebClient(h, ip);
  const form = await client.get(path);
  expect((await client.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string })).status).toBe(303);
  return client;
}

async function snapshot(): Promise<unknown> {
  const db = h.service.db.kysely;
  return {
    keys: await db.selectFrom('api_keys').select(['id', 'revoked_at']).where('account_id', '=', accountId).orderBy('id').execute(),
    endpoints: await db.selectFrom('webhook_endpoints').select(['id', 'secret', 'status', 'url']).where('account_id', '=', accountId).orderBy('id').execute(),
    messages: (
      await db.selectFrom('webhook_messages as m').innerJoin('webhook_endpoints as e', 'e.id', 'm.endpoint_id').select('m.id').where('e.account_id', '=', accountId).execute()
    ).length,
    members: await db.selectFrom('memberships').select(['person_id', 'role']).where('account_id', '=', accountId).orderBy('person_id').execute(),
    invites: await db.selectFrom('team_invites').select(['token_hash', 'revoked_at']).where('account_id', '=', accountId).orderBy('token_hash').execute(),
    balances: await db.selectFrom('balances').select(['mode', 'available', 'reserved']).where('account_id', '=', accountId).orderBy('mode').execute(),
    account: await db.selectFrom('accounts').select(['status', 'two_factor_required_at']).where('id', '=', accountId).execute(),
  };
}

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1' });
  const { client: owner, email } = await signedUp(h, '10.37.0.1');
  accountId = await accountIdOf(h, email);
  clients.set('owner', owner);
  clients.set('developer', await join(owner, newEmail('dev'), 'developer', '10.37.0.2'));
  clients.set('viewer', await join(owner, newEmail('viewer'), 'viewer', '10.37.0.3'));
  const targetEmail = newEmail('target');
  await join(owner, targetEmail, 'viewer', '10.37.0.4');
  ids.target = (await h.service.db.kysely.selectFrom('people').select('id').where('email', '=', targetEmail).executeTakeFirstOrThrow()).id;
  ids.account = accountId;
  await owner.submit('/team', { email: newEmail('pending'), role: 'owner' }, '/team/invite');
  ids.invite = (
    await h.service.db.kysely.selectFrom('team_invites').select('token_hash').where('account_id', '=', accountId).where('used_at', 'is', null).executeTakeFirstOrThrow()
  ).token_hash;
  const added = await owner.submit('/test/webhooks', { url: 'http://127.0.0.1:9/hook' });
  expect(added.status).toBe(200);
  ids.endpoint = (await h.service.db.kysely.selectFrom('webhook_endpoints').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await h?.close();
});

// Viewer first, the owner last: what an allowed role does (delete an endpoint, remove a member)
// happens after every refusal has been checked against the same data.
describe.each(['viewer', 'developer', 'owner'] as Role[])('%s', (role) => {
  test.each(ROUTES.map((r) => [`${r[0]} ${r[1]}`, r] as const))('%s', async (_, [method, template, form, allowed]) => {
    const client = clients.get(role) as WebClient;
    const fill = (s: string) => s.replace(/\{(\w+)\}/g, (_m, name: string) => (name === 'role' ? role : (ids[name] ?? name)));
    const path = fill(template);
    const before = await snapshot();
    const csrf = (await client.get('/account')).csrf as string;
    const fields = Object.fromEntries(Object.entries(form).map(([k, v]) => [k, fill(v)]));
    const page = method === 'GET' ? await client.get(path) : await client.post(path, { ...fields, _csrf: csrf });
    expect(page.status, `${role} ${method} ${path}: ${page.body.slice(0, 200)}`).toBeLessThan(500);
    if (allowed.includes(role)) {
      expect(page.status, `${role} may ${method} ${path}`).not.toBe(403);
      expect(page.location ?? '', `${role} stays signed in`).not.toMatch(/^\/login/);
    } else {
      expect(page.status, `${role} may not ${method} ${path}`).toBe(403);
      expect(page.body).not.toMatch(/sk_(live|test)_[A-Za-z0-9]{20,}|whsec_/);
      expect(await snapshot(), `${role} ${method} ${path} changed nothing`).toEqual(before);
    }
  });
});
