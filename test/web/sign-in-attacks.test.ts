import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { LOGIN_FAILURES_PER_EMAIL, LOGIN_FAILURES_PER_IP } from '../../src/accounts/auth-throttle.js';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { acceptInvite, createInvite } from '../../src/accounts/invites.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * The attacks on invites and sign-in found by probing the dashboard from outside, each replayed
 * (docs/security.md, "Dashboard attacks"): an invite that set the password of someone else's
 * account, invites that outlived their inviter's authority, a password throttle raced by a
 * concurrent burst (two nodes on one database), and cookies without Secure behind an https
 * PUBLIC_URL.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const passwordOf = async (email: string) => (await h.service.db.kysely.selectFrom('people').select('password_hash').where('email', '=', email).executeTakeFirst())?.password_hash;
const personId = async (email: string) => (await h.service.db.kysely.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
const memberships = async (email: string) =>
  (
    await h.service.db.kysely
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select(['m.account_id', 'm.role'])
      .where('p.email', '=', email)
      .orderBy('m.account_id')
      .execute()
  ).map((r) => `${r.account_id}:${r.role}`);

async function invitePath(owner: WebClient, email: string, role: string): Promise<string> {
  const page = await owner.submit('/team', { email, role }, '/team/invite');
  expect(page.status, page.body.slice(0, 500)).toBe(200);
  const url = /id="invite-link"[^>]*>([^<]+)</.exec(page.body)?.[1];
  expect(url).toBeTruthy();
  return new URL(url as string).pathname;
}

async function joinWithPassword(path: string, ip: string): Promise<{ client: WebClient; status: number; body: string }> {
  const client = new WebClient(h, ip);
  const form = await client.get(path);
  if (!form.csrf) return { client, status: form.status, body: form.body };
  const done = await client.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf });
  return { client, status: done.status, body: done.body };
}

describe('an invite never sets the password of a person who already exists', () => {
  test('the takeover: an operator-created account not yet set up, invited by another account', async () => {
    const alice = newEmail('alice');
    const { accountId: aliceAccount } = await createAccount(h.service.db, alice);
    const link = await issuePasswordLink(h.service.db, alice);
    const { client: mallory } = await signedUp(h, '10.40.1.1');
    const path = await invitePath(mallory, alice, 'developer');

    // No password form for Alice's address: she accepts only signed in as herself.
    const opened = await new WebClient(h, '10.40.1.2').get(path);
    expect(opened.status).toBe(200);
    expect(opened.body).not.toContain('name="password"');
    expect(opened.body).toContain('already has a Starport login');

    // Posting a password anyway is refused, and changes nothing.
    const attacker = new WebClient(h, '10.40.1.2');
    // (The invite page has no form to take a token from: the login form's, bound to the same cookie.)
    const token = (await attacker.get('/login')).csrf as string;
    const posted = await attacker.post(path, { password: 'mallory chose this', password_again: 'mallory chose this', _csrf: token });
    expect(posted.status).toBe(400);
    expect(posted.body).toContain(`This invite is for ${alice}, who already has a Starport login`);
    expect(attacker.session).toBeUndefined();
    expect(await passwordOf(alice)).toBeNull();
    expect(await memberships(alice)).toEqual([`${aliceAccount}:owner`]);
    expect((await new WebClient(h, '10.40.1.3').logIn(alice, 'mallory chose this')).status).toBe(401);

    // Alice sets her password with her own link, signs in, and can then accept the invite herself.
    const own = new WebClient(h, '10.40.1.4');
    const set = await own.submit(`/set-password/${link.token}`, { password: PASSWORD, password_again: PASSWORD });
    expect(set.status).toBe(303);
    const accept = await own.get(path);
    expect(accept.body).toContain('Join the account');
    const joined = await own.post(path, { _csrf: accept.csrf as string });
    expect(joined.location).toBe('/?notice=joined');
    expect(await memberships(alice)).toHaveLength(2);
  });

  test('the same refusal inside acceptInvite itself, for a person with or without a password', async () => {
    const { accountId, owner } = await accountWithOwner();
    for (const password of [null, 'x']) {
      const email = newEmail('existing');
      await createAccount(h.service.db, email);
      if (password) await h.service.db.kysely.updateTable('people').set({ password_hash: '$argon2id$placeholder' }).where('email', '=', email).execute();
      const before = await passwordOf(email);
      const invite = await createInvite(h.service.db, { accountId, email, role: 'owner', invitedBy: owner });
      const result = await acceptInvite(h.service.db, invite.token, { password: 'a long enough password' });
      expect(result).toMatchObject({ ok: false, reason: 'wrong_person' });
      expect(await passwordOf(email)).toBe(before);
    }
  });
});

async function accountWithOwner(): Promise<{ accountId: string; owner: string; email: string }> {
  const email = newEmail('owner');
  const { accountId } = await createAccount(h.service.db, email);
  return { accountId, owner: await personId(email), email };
}

describe('an invite lives only as long as its inviter is an owner', () => {
  /** An account with two owners (A signed in, B signed in) and an owner invite B sent for an address B controls. */
  async function ownersAndInvite(tag: string) {
    const { client: a, email: aEmail } = await signedUp(h, `10.41.${tag}.1`);
    const bEmail = newEmail('b');
    const { client: b } = await joinWithPassword(await invitePath(a, bEmail, 'owner'), `10.41.${tag}.2`);
    const path = await invitePath(b, newEmail('sleeper'), 'owner');
    return { a, aEmail, b, bEmail, path, accountId: await accountIdOf(h, aEmail) };
  }

  test('removing the inviter voids their pending invites', async () => {
    const { a, bEmail, path, accountId } = await ownersAndInvite('1');
    const team = await a.get('/team');
    expect(team.body).toContain('Pending invites');
    expect(team.body).toContain(bEmail);
    const removed = await a.submit('/team', {}, `/team/members/${await personId(bEmail)}/remove`);
    expect(removed.location).toBe('/team?notice=removed');
    const tried = await joinWithPassword(path, '10.41.1.9');
    expect(tried.status).toBe(404);
    expect(tried.body).toContain('This invite was revoked. The owner who sent it was removed from the account.');
    expect((await h.service.db.kysely.selectFrom('memberships').select('person_id').where('account_id', '=', accountId).execute()).length).toBe(1);
    expect((await a.get('/team')).body).not.toContain('Pending invites');
  });

  test('demoting the inviter voids their pending invites', async () => {
    const { a, bEmail, path } = await ownersAndInvite('2');
    const demoted = await a.submit('/team', { role: 'developer' }, `/team/members/${await personId(bEmail)}/role`);
    expect(demoted.location).toBe('/team?notice=role_changed');
    const tried = await joinWithPassword(path, '10.41.2.9');
    expect(tried.status).toBe(404);
    expect(tried.body).toContain('is no longer an owner of the account');
  });

  test('an invite whose inviter lost the role by any other path is refused when accepted', async () => {
    const { accountId, owner } = await accountWithOwner();
    const invite = await createInvite(h.service.db, { accountId, email: newEmail('late'), role: 'owner', invitedBy: owner });
    // As an invite made before invites were voided on demotion: the role changes under it.
    await h.service.db.kysely.updateTable('memberships').set({ role: 'viewer' }).where('person_id', '=', owner).execute();
    const result = await acceptInvite(h.service.db, invite.token, { password: 'a long enough password' });
    expect(result).toMatchObject({ ok: false, reason: 'revoked' });
    expect(await h.service.db.kysely.selectFrom('memberships').select('role').where('account_id', '=', accountId).execute()).toEqual([{ role: 'viewer' }]);
  });

  test('every owner sees pending invites, with who sent them and when they expire, and may revoke them', async () => {
    const { a, aEmail, b, path } = await ownersAndInvite('3');
    const team = await a.get('/team');
    const row = /<tr data-invite="sleeper[^"]*">([\s\S]*?)<\/tr>/.exec(team.body)?.[1] ?? '';
    expect(row).toContain('owner');
    expect(row).toMatch(/<time datetime="\d{4}-\d\d-\d\dT/);
    const action = /action="(\/team\/invites\/[0-9a-f]+\/revoke)"/.exec(row)?.[1] as string;
    expect(action).toBeTruthy();
    // The owner who did not send it revokes it; a second try finds it no longer pending.
    expect((await a.submit('/team', {}, action)).location).toBe('/team?notice=invite_revoked');
    expect((await b.submit('/team', {}, action)).location).toBe('/team?notice=invite_gone');
    const tried = await joinWithPassword(path, '10.41.3.9');
    expect(tried.status).toBe(404);
    expect(tried.body).toContain(`This invite was revoked. ${aEmail} revoked it.`);
    const audit = await h.service.db.kysely.selectFrom('audit_log').select('action').where('action', '=', 'team.invite_revoke').where('actor', '=', aEmail).execute();
    expect(audit).toHaveLength(1);
  });

  test('a used or expired invite says which', async () => {
    const { client: a } = await signedUp(h, '10.41.4.1');
    const used = await invitePath(a, newEmail('used'), 'viewer');
    expect((await joinWithPassword(used, '10.41.4.2')).status).toBe(303);
    expect((await new WebClient(h, '10.41.4.3').get(used)).body).toContain('This invite was already used.');
    const expired = await invitePath(a, newEmail('expired'), 'viewer');
    await h.service.db.kysely
      .updateTable('team_invites')
      .set({ expires_at: Date.now() - 1000 })
      .where('email', 'like', 'expired-%')
      .execute();
    expect((await new WebClient(h, '10.41.4.4').get(expired)).body).toMatch(/This invite expired on \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC\. Ask the account owner/);
  });
});

describe('the password throttle holds under a concurrent burst, on two nodes', () => {
  let fresh: FreshDatabase;
  let nodes: RunningService[] = [];

  beforeAll(async () => {
    fresh = await freshDatabase();
    const config = loadConfig({ ...fresh.env, PORT: '0' });
    nodes = [await startService(config, createLogger('silent')), await startService(config, createLogger('silent'), 'api')];
  });
  afterAll(async () => {
    for (const node of nodes) await node.stop();
    await fresh?.dispose();
  });

  /** A login form post as a browser on `node` from `ip` would send it. */
  async function loginAt(node: RunningService, ip: string, email: string, password: string): Promise<number> {
    const client = new WebClient({ inject: node.app.inject.bind(node.app) } as unknown as Harness, ip);
    return (await client.logIn(email, password)).status;
  }

  async function person(): Promise<string> {
    const email = newEmail('burst');
    const node = nodes[0] as RunningService;
    expect((await new WebClient({ inject: node.app.inject.bind(node.app) } as unknown as Harness, '10.42.0.1').signUp(email)).status).toBe(200);
    return email;
  }

  const failuresOf = async (email: string) =>
    Number(
      (
        await (nodes[0] as RunningService).db.kysely
          .selectFrom('auth_attempts')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('email', '=', email)
          .where('kind', '=', 'login_failed')
          .executeTakeFirstOrThrow()
      ).n,
    );

  test(`200 wrong passwords at once: at most ${LOGIN_FAILURES_PER_EMAIL} are checked, the rest 429`, async () => {
    const email = await person();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => loginAt(nodes[i % 2] as RunningService, `10.42.${1 + (i >> 8)}.${i & 255}`, email, `wrong password ${i}`)),
    );
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBeLessThanOrEqual(LOGIN_FAILURES_PER_EMAIL);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - checked);
    expect(await failuresOf(email)).toBe(checked);
  });

  test('a right password inside a burst past the limit is refused', async () => {
    const email = await person();
    // The limit is reached (a first burst, then single failures until five are recorded)…
    await Promise.all(Array.from({ length: 60 }, (_, i) => loginAt(nodes[i % 2] as RunningService, `10.43.0.${i}`, email, `wrong password ${i}`)));
    for (let i = 0; (await failuresOf(email)) < LOGIN_FAILURES_PER_EMAIL; i++) expect(await loginAt(nodes[0] as RunningService, `10.43.1.${i}`, email, 'wrong again!')).toBe(401);
    // …then a burst of 100 with the right password at position 40: nothing gets through.
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => loginAt(nodes[i % 2] as RunningService, `10.43.2.${i}`, email, i === 40 ? PASSWORD : `wrong password ${i}`)),
    );
    expect(statuses[40]).toBe(429);
    expect(new Set(statuses)).toEqual(new Set([429]));
  });

  test(`100 wrong passwords at once from one IP, each for another e-mail: at most ${LOGIN_FAILURES_PER_IP} checked`, async () => {
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => loginAt(nodes[i % 2] as RunningService, '10.44.0.1', newEmail(`spray${i}`), 'password spray')));
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(LOGIN_FAILURES_PER_IP);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
  });
});

describe('an https PUBLIC_URL makes cookies Secure and sends HSTS, whatever the proxy headers say', () => {
  let secure: Harness;
  beforeAll(async () => {
    secure = await startHarness({ PUBLIC_URL: 'https://dashboard.example.test' });
  });
  afterAll(async () => {
    await secure?.close();
  });

  const setCookies = (headers: Record<string, unknown>) => [headers['set-cookie']].flat().map(String);

  test('the pre-session and session cookies are Secure and every page sends Strict-Transport-Security', async () => {
    const client = new WebClient(secure, '10.45.0.1');
    const form = await client.get('/login');
    expect(form.headers['strict-transport-security']).toBe('max-age=31536000');
    expect(setCookies(form.headers).find((c) => c.startsWith('sp_pre='))).toMatch(/; Secure/);
    const signed = await client.post('/signup', { email: newEmail('secure'), password: PASSWORD, _csrf: (await client.get('/signup')).csrf as string });
    expect(signed.status).toBe(200);
    expect(setCookies(signed.headers).find((c) => c.startsWith('sp_session='))).toMatch(/; Secure/);
    const notFound = await client.get('/no-such-page', { accept: 'text/html' });
    expect(notFound.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  test('without it (plain http, no trusted proxy), neither', async () => {
    const client = new WebClient(h, '10.45.0.2');
    const form = await client.get('/login');
    expect(form.headers['strict-transport-security']).toBeUndefined();
    expect(setCookies(form.headers).find((c) => c.startsWith('sp_pre='))).not.toMatch(/Secure/);
  });
});
