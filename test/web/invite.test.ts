import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret } from '../../src/accounts/secrets.js';
import { listAudit } from '../../src/audit/audit.js';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';
import { newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * `starport account invite --email E` (the real CLI process, against the harness's database)
 * prints a one-time set-password link; the same kind of link resets a forgotten password.
 */
let h: Harness;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  h = await startHarness();
  // The harness's database (DATA_DIR, and DATABASE_URL on PostgreSQL); PUBLIC_URL makes the printed link point at it.
  cli = cliFor({ DATA_DIR: h.dataDir, PUBLIC_URL: h.url, ...(await databaseEnv()) });
});
afterAll(async () => {
  await h?.close();
});

/** The database the harness uses, for the CLI child process. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (process.env.TEST_ENGINE !== 'postgres') return {};
  const row = await h.service.db.kysely.selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name')).executeTakeFirstOrThrow();
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `/${row.name}`;
  return { DATABASE_URL: url.toString() };
}

async function invite(email: string): Promise<{ url: string; path: string; token: string; json: any }> {
  const args = ['account', 'invite', '--email', email, '--json'];
  const result = await cli(args);
  expect(result.code, describeRun(args, result)).toBe(0);
  const json = parseJsonStdout(result);
  const url = new URL(json.url);
  return { url: json.url, path: url.pathname, token: url.pathname.split('/').pop() as string, json };
}

describe('account create', { timeout: 60_000 }, () => {
  test('prints a one-time link with which the new account sets its dashboard password and logs in', async () => {
    const email = newEmail('create');
    const args = ['account', 'create', '--email', email, '--json'];
    const result = await cli(args);
    expect(result.code, describeRun(args, result)).toBe(0);
    const created = parseJsonStdout(result);
    expect(created.set_password_url.startsWith(`${h.url}/set-password/`)).toBe(true);
    expect(Date.parse(created.set_password_expires_at) - Date.now()).toBeGreaterThan(71 * 3600 * 1000);
    // The walkthrough's path: sign-up with this e-mail is refused, the link is the way in.
    const refused = await new WebClient(h, '10.3.9.1').signUp(email);
    expect(refused.status).toBe(400);
    const path = new URL(created.set_password_url).pathname;
    const browser = new WebClient(h, '10.3.9.2');
    const form = await browser.get(path);
    expect(form.status).toBe(200);
    expect(form.body).toContain(email);
    const done = await browser.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string });
    expect(done.status).toBe(303);
    expect((await browser.get('/')).body).toContain(email);
    // Once.
    expect((await new WebClient(h, '10.3.9.3').get(path)).status).toBe(404);
    // And the password logs in from another browser.
    expect((await new WebClient(h, '10.3.9.4').logIn(email, PASSWORD)).status).toBe(303);
  });
});

describe('account invite', { timeout: 60_000 }, () => {
  test('an operator-created account sets its password through the link, once, and is logged in', async () => {
    const account = await h.account();
    const { email } = await h.service.db.kysely.selectFrom('accounts').select('email').where('id', '=', account.accountId).executeTakeFirstOrThrow();

    const args = ['account', 'invite', '--email', email];
    const text = await cli(args);
    expect(text.code, describeRun(args, text)).toBe(0);
    expect(text.stdout).toContain(`${h.url}/set-password/`);
    expect(text.stdout).toContain('It works once');

    const { path, token, json } = await invite(email.toUpperCase());
    expect(json).toMatchObject({ account_id: account.accountId, email });
    expect(Date.parse(json.expires_at) - Date.now()).toBeGreaterThan(71 * 3600 * 1000);
    // Only the token's hash is stored.
    const stored = await h.service.db.kysely.selectFrom('password_tokens').select('token_hash').where('account_id', '=', account.accountId).execute();
    expect(stored.map((r) => r.token_hash)).toContain(hashSecret(token));
    expect(stored.map((r) => r.token_hash)).not.toContain(token);

    // Before the password is set, no password logs in.
    expect((await new WebClient(h, '10.3.0.1').logIn(email, '')).status).toBe(401);

    const browser = new WebClient(h, '10.3.0.2');
    const form = await browser.get(path);
    expect(form.status).toBe(200);
    expect(form.headers['referrer-policy']).toBe('no-referrer');
    expect(form.body).toContain(email);
    const mismatch = await browser.post(path, { password: PASSWORD, password_again: 'something else', _csrf: form.csrf as string });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body).toContain('The two passwords are different.');
    const weak = await browser.post(path, { password: 'short', password_again: 'short', _csrf: form.csrf as string });
    expect(weak.status).toBe(400);

    const done = await browser.post(path, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/?notice=password_set');
    expect(browser.session).toBeTruthy();
    expect((await browser.get('/?notice=password_set')).body).toContain('Your password is set.');

    // Used: the link no longer works, in either direction.
    const again = new WebClient(h, '10.3.0.3');
    const reused = await again.get(path);
    expect(reused.status).toBe(404);
    expect(reused.body).toContain('This link does not work');
    const repost = await again.post(path, { password: 'another password!', password_again: 'another password!', _csrf: (await again.get('/login')).csrf as string });
    expect(repost.status).toBe(404);

    expect((await new WebClient(h, '10.3.0.4').logIn(email)).status).toBe(303);

    // The use of the link is in the account's activity log, once (the refused attempts are not), without the token.
    const used = (await listAudit(h.service.db.kysely, { accountId: account.accountId, limit: 50 })).filter((r) => r.action === 'dashboard.password_link');
    expect(used).toEqual([expect.objectContaining({ actor: email, source: 'dashboard', details: { ip: '10.3.0.2' } })]);
    expect(JSON.stringify(used)).not.toContain(token);
  });

  test('the same link resets a forgotten password and logs out every session; a newer link replaces an older one', async () => {
    const { client, email } = await signedUp(h, '10.3.1.1');
    const first = await invite(email);
    const second = await invite(email);
    expect((await new WebClient(h, '10.3.1.2').get(first.path)).status, 'the older link is void').toBe(404);

    const browser = new WebClient(h, '10.3.1.3');
    const form = await browser.get(second.path);
    const done = await browser.post(second.path, { password: 'my new passphrase', password_again: 'my new passphrase', _csrf: form.csrf as string });
    expect(done.status).toBe(303);

    expect((await client.get('/')).status, 'the old session was ended').toBe(303);
    expect((await new WebClient(h, '10.3.1.4').logIn(email, PASSWORD)).status, 'old password').toBe(401);
    expect((await new WebClient(h, '10.3.1.5').logIn(email, 'my new passphrase')).status).toBe(303);
  });

  test('an expired link does not work', async () => {
    const { email } = await signedUp(h, '10.3.2.1');
    const link = await invite(email);
    await h.service.db.kysely
      .updateTable('password_tokens')
      .set({ expires_at: Date.now() - 1 })
      .where('token_hash', '=', hashSecret(link.token))
      .execute();
    expect((await new WebClient(h, '10.3.2.2').get(link.path)).status).toBe(404);
  });

  test('malformed tokens are a 404 page, not an error', async () => {
    for (const token of ['x', 'A'.repeat(43), 'a'.repeat(90), '%00']) {
      expect((await new WebClient(h, '10.3.3.1').get(`/set-password/${token}`)).status, token).toBe(404);
    }
  });

  test('an unknown e-mail, a missing --email and --help', async () => {
    const unknown = newEmail('nobody');
    const missing = await cli(['account', 'invite', '--email', unknown]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no account with e-mail ${unknown}`);
    const json = await cli(['account', 'invite', '--email', unknown, '--json']);
    expect(json.code).toBe(1);
    expect(parseJsonStdout(json)).toMatchObject({ ok: false });
    const noEmail = await cli(['account', 'invite']);
    expect(noEmail.code).toBe(1);
    expect(noEmail.stderr).toContain('--email is required');
    const help = await cli(['account', 'invite', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: starport account invite --email EMAIL');
    const overview = await cli(['--help']);
    expect(overview.stdout).toContain('account invite');
  });
});
