import { generate } from 'otplib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * `account members`, `account member remove` and `account 2fa reset` (the real CLI process
 * against the harness's database): audited, so they show in the account's activity log.
 */
let h: Harness;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  h = await startHarness();
  cli = cliFor({ ...h.databaseEnv, PUBLIC_URL: h.url, STARPORT_ACTOR: 'ops-alice' });
});
afterAll(async () => {
  await h?.close();
});

async function run(args: string[]): Promise<any> {
  const result = await cli([...args, '--json']);
  expect(result.code, describeRun(args, result)).toBe(0);
  return parseJsonStdout(result);
}

test('members are listed; removing one ends their session; the last owner stays; all audited', async () => {
  const { client: owner, email: ownerEmail } = await signedUp(h, '10.36.0.1');
  const accountId = await accountIdOf(h, ownerEmail);
  const memberEmail = newEmail('member');
  const invite = await owner.submit('/team', { email: memberEmail, role: 'viewer' }, '/team/invite');
  const path = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(invite.body)?.[1] as string).pathname;
  const member = new WebClient(h, '10.36.0.2');
  const form = await member.get(path);
  await member.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string });
  expect((await member.get('/')).status).toBe(200);

  const listed = await run(['account', 'members', accountId]);
  expect(listed.members.map((m: any) => [m.email, m.role, m.two_factor])).toEqual([
    [ownerEmail, 'owner', false],
    [memberEmail, 'viewer', false],
  ]);
  expect((await run(['account', 'members', ownerEmail])).account_id).toBe(accountId);

  const removed = await run(['account', 'member', 'remove', accountId, '--email', memberEmail, '--reason', 'left the company']);
  expect(removed).toMatchObject({ removed: true, role: 'viewer' });
  expect((await member.get('/')).location).toMatch(/^\/login/);

  const last = await cli(['account', 'member', 'remove', accountId, '--email', ownerEmail, '--reason', 'x']);
  expect(last.code).toBe(1);
  expect(last.stderr).toContain('at least one owner');
  const unknown = await cli(['account', 'member', 'remove', accountId, '--email', 'nobody@example.com', '--reason', 'x']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('not a member');
  const noReason = await cli(['account', 'member', 'remove', accountId, '--email', memberEmail]);
  expect(noReason.code).toBe(1);

  const audit = await h.service.db.kysely
    .selectFrom('audit_log')
    .select(['actor', 'source', 'action', 'reason'])
    .where('account_id', '=', accountId)
    .where('action', '=', 'team.remove')
    .execute();
  expect(audit).toEqual([{ actor: 'ops-alice', source: 'cli', action: 'team.remove', reason: 'left the company' }]);
  expect((await owner.get('/activity')).body).toContain('ops-alice (operator)');
});

test('2fa reset: the person signs in with the password alone again and every session of theirs ends', async () => {
  const { client, email } = await signedUp(h, '10.36.1.1');
  const page = await client.get('/account/two-factor');
  const secret = /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(page.body)?.[1] as string;
  const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) });
  expect((await client.post('/account/two-factor', { code, _csrf: page.csrf as string })).status).toBe(200);

  const reset = await run(['account', '2fa', 'reset', '--email', email, '--reason', 'lost phone, identity checked by video call']);
  expect(reset).toMatchObject({ email, two_factor_was_on: true });
  expect((await client.get('/')).location).toMatch(/^\/login/);
  const again = new WebClient(h, '10.36.1.1');
  expect((await again.logIn(email)).location).toBe('/');
  const people = await h.service.db.kysely.selectFrom('people').select(['totp_secret', 'totp_enabled_at']).where('email', '=', email).executeTakeFirstOrThrow();
  expect(people).toEqual({ totp_secret: null, totp_enabled_at: null });
  expect(
    await h.service.db.kysely.selectFrom('recovery_codes as r').innerJoin('people as p', 'p.id', 'r.person_id').select('r.code_hash').where('p.email', '=', email).execute(),
  ).toEqual([]);
  const audit = await h.service.db.kysely
    .selectFrom('audit_log')
    .select(['actor', 'action'])
    .where('account_id', '=', await accountIdOf(h, email))
    .where('action', '=', 'two_factor.reset')
    .execute();
  expect(audit).toEqual([{ actor: 'ops-alice', action: 'two_factor.reset' }]);

  const missing = await cli(['account', '2fa', 'reset', '--email', 'nobody@example.com', '--reason', 'x']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('no dashboard login');
});
