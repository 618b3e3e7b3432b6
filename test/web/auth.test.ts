import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashSecret } from '../../src/accounts/secrets.js';
import { SESSION_IDLE_MS } from '../../src/accounts/sessions.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * Dashboard sign-up, login, logout and sessions over HTTP (inject), on a fresh database per
 * file. Sessions are server-side: the tests look at the dashboard_sessions table directly.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const sessions = (accountId: string) => h.service.db.kysely.selectFrom('dashboard_sessions').selectAll().where('account_id', '=', accountId).execute();

describe('sign up', () => {
  test('creates an account with both balances at 0, logs in and lands on the test overview', async () => {
    const client = new WebClient(h, '10.0.1.1');
    const form = await client.get('/signup');
    expect(form.status).toBe(200);
    expect(form.body).toContain('<label for="email">E-mail</label>');
    expect(form.body).toContain('autocomplete="new-password"');
    const email = newEmail('signup');
    const done = await client.post('/signup', { email, password: PASSWORD, _csrf: form.csrf as string });
    // The answer shows both new keys once; each works against the API in its own mode.
    expect(done.status).toBe(200);
    expect(done.headers['cache-control']).toBe('no-store');
    const keyOf = (m: string) => new RegExp(`value="(sk_${m}_[0-9A-Za-z]+)"[^>]*data-testid="new-key-${m}"`).exec(done.body)?.[1] as string;
    const liveKey = keyOf('live');
    const testKey = keyOf('test');
    expect(liveKey).toMatch(/^sk_live_[0-9A-Za-z]{38}$/);
    expect(testKey).toMatch(/^sk_test_[0-9A-Za-z]{38}$/);
    expect(done.body).toContain('href="/test?notice=welcome"');
    for (const [key, mode] of [
      [liveKey, 'live'],
      [testKey, 'test'],
    ] as const) {
      const balance = await h.inject({ method: 'GET', url: '/api/v1/balance', headers: { authorization: `Bearer ${key}` } });
      expect(balance.statusCode, mode).toBe(200);
      expect(balance.json().mode).toBe(mode);
    }
    // Once: no later page carries them, and the keys page shows only their prefixes.
    const keysPage = await client.get('/test/keys');
    expect(keysPage.body).not.toContain(liveKey);
    expect(keysPage.body).not.toContain(testKey);
    expect(keysPage.body).toContain(`${testKey.slice(0, 12)}…`);
    const cookie = String(done.headers['set-cookie']);
    expect(cookie).toMatch(/sp_session=[A-Za-z0-9_-]{43}/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i); // plain http here; Secure is set over https (see below)

    const overview = await client.get('/test?notice=welcome');
    expect(overview.status).toBe(200);
    expect(overview.body).not.toContain(testKey);
    expect(overview.body).toContain('Your account is ready.');
    expect(overview.body).toContain(email);
    expect(overview.body).toMatch(/data-testid="live-available">0 TON</);
    expect(overview.body).toMatch(/data-testid="test-available">0 TON</);
    expect(overview.body).toContain('class="test-banner"');

    const accountId = await accountIdOf(h, email);
    const user = await h.service.db.kysely.selectFrom('people').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(user.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // The session id is stored only as its hash.
    const [row] = await sessions(accountId);
    expect(row?.id_hash).toBe(hashSecret(client.session as string));
  });

  test('refuses a short password and an invalid e-mail with a clear message, keeping the e-mail', async () => {
    const client = new WebClient(h, '10.0.1.2');
    const short = await client.submit('/signup', { email: 'short@example.com', password: 'tooshort' });
    expect(short.status).toBe(400);
    expect(short.body).toContain('Use at least 10 characters.');
    expect(short.body).toContain('value="short@example.com"');
    const invalid = await client.submit('/signup', { email: 'not-an-email', password: PASSWORD });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toContain('Enter a valid e-mail address');
    expect(client.session).toBeUndefined();
  });

  test('an e-mail that already has an account cannot be signed up again (and its password is not checked)', async () => {
    const { email } = await signedUp(h, '10.0.1.3');
    const other = new WebClient(h, '10.0.1.4');
    const page = await other.submit('/signup', { email: email.toUpperCase(), password: 'another password here' });
    expect(page.status).toBe(400);
    expect(page.body).toContain('We could not create an account with this e-mail address.');
    expect(other.session).toBeUndefined();
  });

  test('an operator-created account cannot be taken over by signing up with its e-mail', async () => {
    const account = await h.account();
    const row = await h.service.db.kysely.selectFrom('accounts').select('email').where('id', '=', account.accountId).executeTakeFirstOrThrow();
    const page = await new WebClient(h, '10.0.1.5').submit('/signup', { email: row.email, password: PASSWORD });
    expect(page.status).toBe(400);
    const users = await h.service.db.kysely.selectFrom('people').select('password_hash').where('email', '=', row.email).execute();
    expect(users).toEqual([{ password_hash: null }]);
  });
});

describe('log in and log out', () => {
  test('login issues a new session id (no fixation), and logout deletes the session server-side', async () => {
    const { client, email } = await signedUp(h, '10.0.2.1');
    const accountId = await accountIdOf(h, email);
    const first = client.session as string;

    // Log in again from the same browser (GET /login redirects a logged-in user, so take the
    // signed-out forms' token from the sign-up page): a new id, and the old session is gone.
    const token = (await client.get('/signup')).csrf as string;
    const login = await client.post('/login', { email, password: PASSWORD, _csrf: token });
    expect(login.status).toBe(303);
    expect(login.location).toBe('/');
    const second = client.session as string;
    expect(second).not.toBe(first);
    expect((await sessions(accountId)).map((s) => s.id_hash)).toEqual([hashSecret(second)]);

    // A copy of the cookie kept by someone else works until logout...
    const stolen = new WebClient(h, '10.0.2.2');
    stolen.cookies.set('sp_session', second);
    expect((await stolen.get('/')).status).toBe(200);

    const out = await client.logOut();
    expect(out.status).toBe(303);
    expect(out.location).toBe('/login?notice=logged_out');
    expect(client.session).toBeUndefined();
    expect(await sessions(accountId)).toEqual([]);
    // ...and not after: the server forgot the session.
    const after = await stolen.get('/');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/login?notice=expired');
  });

  test('a fixed session id planted before login is not adopted', async () => {
    const { email } = await signedUp(h, '10.0.2.3');
    const victim = new WebClient(h, '10.0.2.4');
    const planted = 'A'.repeat(43);
    victim.cookies.set('sp_session', planted);
    await victim.logIn(email);
    expect(victim.session).toBeTruthy();
    expect(victim.session).not.toBe(planted);
  });

  test('wrong password and unknown e-mail get the same answer', async () => {
    const { email } = await signedUp(h, '10.0.2.5');
    const wrong = await new WebClient(h, '10.0.2.6').logIn(email, 'not the password at all');
    const unknown = await new WebClient(h, '10.0.2.7').logIn(newEmail('nobody'), 'not the password at all');
    const noPassword = await new WebClient(h, '10.0.2.8').logIn(
      (
        await h.service.db.kysely
          .selectFrom('accounts')
          .select('email')
          .where('id', '=', (await h.account()).accountId)
          .executeTakeFirstOrThrow()
      ).email,
      'not the password at all',
    );
    for (const page of [wrong, unknown, noPassword]) {
      expect(page.status).toBe(401);
      expect(page.body).toContain('Incorrect e-mail or password.');
    }
    const message = (body: string) => /<div class="notice notice-error" role="alert">([^<]*)<\/div>/.exec(body)?.[1];
    expect(message(unknown.body)).toBe(message(wrong.body));
    expect(message(noPassword.body)).toBe(message(wrong.body));
  });

  test('odd input (NUL characters, very long values) is answered, never an error', async () => {
    const client = new WebClient(h, '10.0.2.20');
    for (const [email, password] of [
      ['a\u0000b@example.com', PASSWORD],
      [`${'x'.repeat(5000)}@example.com`, PASSWORD],
      ['someone@example.com', `pass\u0000word-${'y'.repeat(2000)}`],
    ]) {
      expect((await new WebClient(h, '10.0.2.20').logIn(email as string, password)).status).toBe(401);
      expect((await new WebClient(h, '10.0.2.21').signUp(email, password)).status).toBeLessThan(500);
    }
    // The NUL is dropped: "a\u0000b@" signed up as "ab@".
    expect((await client.logIn('ab@example.com')).status).toBe(303);
  });

  test('e-mail is matched case-insensitively and surrounding spaces are ignored', async () => {
    const { email } = await signedUp(h, '10.0.2.9');
    const page = await new WebClient(h, '10.0.2.10').logIn(`  ${email.toUpperCase()} `);
    expect(page.status).toBe(303);
  });

  test('pages need a session: a visitor is sent to the login page, which returns them afterwards', async () => {
    const visitor = new WebClient(h, '10.0.2.11');
    for (const path of ['/', '/test', '/top-up', '/test/top-up', '/keys', '/orders', '/test/orders/ord_x', '/test/guide', '/top-up/qr.svg']) {
      const page = await visitor.get(path);
      expect(page.status, path).toBe(303);
      expect(page.location, path).toBe(path === '/' ? '/login' : `/login?next=${encodeURIComponent(path)}`);
    }
    const { email } = await signedUp(h, '10.0.2.12');
    const login = await visitor.get('/login?next=%2Ftest%2Forders');
    expect(login.body).toContain('name="next" value="/test/orders"');
    const done = await visitor.post('/login', { email, password: PASSWORD, next: '/test/orders', _csrf: login.csrf as string });
    expect(done.location).toBe('/test/orders');
  });

  test('the next parameter cannot send the user to another site', async () => {
    const { email } = await signedUp(h, '10.0.2.13');
    for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      const client = new WebClient(h, '10.0.2.14');
      const page = await client.get(`/login?next=${encodeURIComponent(next)}`);
      const done = await client.post('/login', { email, password: PASSWORD, next, _csrf: page.csrf as string });
      expect(done.location, next).toBe('/');
    }
  });

  test('cookies are Secure when the request came over HTTPS', async () => {
    // Fastify only believes X-Forwarded-Proto behind a trusted proxy; check the cookie helper directly.
    const { cookieOptions } = await import('../../src/http/html/http.js');
    const server = { httpsOrigin: false };
    expect(cookieOptions({ protocol: 'https', server } as never).secure).toBe(true);
    expect(cookieOptions({ protocol: 'http', server } as never).secure).toBe(false);
  });
});

describe('session expiry', () => {
  test('a session past its absolute lifetime is refused and deleted', async () => {
    const { client, email } = await signedUp(h, '10.0.3.1');
    const accountId = await accountIdOf(h, email);
    await h.service.db.kysely
      .updateTable('dashboard_sessions')
      .set({ expires_at: Date.now() - 1 })
      .where('account_id', '=', accountId)
      .execute();
    const page = await client.get('/keys');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/login?next=%2Fkeys&notice=expired');
    expect(client.session).toBeUndefined(); // the stale cookie is cleared
    expect(await sessions(accountId)).toEqual([]);
    const login = await client.get(page.location as string);
    expect(login.body).toContain('Your session has ended.');
  });

  test('a session idle for longer than the idle limit is refused', async () => {
    const { client, email } = await signedUp(h, '10.0.3.2');
    const accountId = await accountIdOf(h, email);
    await h.service.db.kysely
      .updateTable('dashboard_sessions')
      .set({ last_seen_at: Date.now() - SESSION_IDLE_MS - 1000 })
      .where('account_id', '=', accountId)
      .execute();
    expect((await client.get('/')).status).toBe(303);
    expect(await sessions(accountId)).toEqual([]);
  });

  test('activity keeps a session alive (last_seen_at moves)', async () => {
    const { client, email } = await signedUp(h, '10.0.3.3');
    const accountId = await accountIdOf(h, email);
    const old = Date.now() - SESSION_IDLE_MS + 60_000;
    await h.service.db.kysely.updateTable('dashboard_sessions').set({ last_seen_at: old }).where('account_id', '=', accountId).execute();
    expect((await client.get('/')).status).toBe(200);
    const [row] = await sessions(accountId);
    expect(Number(row?.last_seen_at)).toBeGreaterThan(old);
  });

  test('a disabled account is logged out at its next request', async () => {
    const { client, email } = await signedUp(h, '10.0.3.4');
    await h.service.db.kysely.updateTable('accounts').set({ status: 'disabled' }).where('email', '=', email).execute();
    expect((await client.get('/')).status).toBe(303);
    const login = await new WebClient(h, '10.0.3.5').logIn(email);
    expect(login.status).toBe(403);
    expect(login.body).toContain('This account is disabled.');
  });

  test('garbage session cookies are refused without error', async () => {
    const client = new WebClient(h, '10.0.3.6');
    for (const value of ['x', 'A'.repeat(43), '%00', 'a'.repeat(5000)]) {
      client.cookies.set('sp_session', value);
      const page = await client.get('/');
      expect(page.status, value.slice(0, 10)).toBe(303);
    }
  });
});

describe('SIGNUP=closed', () => {
  let closed: Harness;
  beforeAll(async () => {
    closed = await startHarness({ SIGNUP: 'closed' });
  });
  afterAll(async () => {
    await closed?.close();
  });

  test('the sign-up page says so, posting is refused, and login does not offer it', async () => {
    const client = new WebClient(closed);
    const page = await client.get('/signup');
    expect(page.status).toBe(403);
    expect(page.body).toContain('Sign-up is closed');
    expect(page.body).not.toContain('action="/signup"');
    const login = await client.get('/login');
    expect(login.body).not.toContain('href="/signup"');
    const post = await client.post('/signup', { email: newEmail(), password: PASSWORD, _csrf: login.csrf as string });
    expect(post.status).toBe(403);
    const count = await closed.service.db.kysely
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  test('an open installation links sign-up from the login page', async () => {
    const login = await new WebClient(h).get('/login');
    expect(login.body).toContain('href="/signup"');
  });
});

describe('the API is unchanged', () => {
  test('API routes answer JSON without dashboard cookies or headers', async () => {
    const res = await h.inject({ method: 'GET', url: '/api/v1/balance' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(JSON.parse(res.body).error.code).toBe('missing_api_key');
  });

  test('a form post to the API is still 415, not parsed by the dashboard', async () => {
    const { testKey } = await h.account({ test: '1' });
    const res = await h.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'k1' },
      payload: 'product=stars',
    });
    expect(res.statusCode).toBe(415);
  });
});
