import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createOperator } from '../../src/operator/operators.js';
import { consoleClient, signedInOperator, totpCode } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { PASSWORD, signedUp } from '../support/web.js';

/**
 * The console's door (docs/operations.md "Operator console"): its own listener, the one-time
 * link, two-factor enrolment at the first sign-in, password + code after, its own cookie,
 * sign-out, CSRF, the throttle, and audit rows carrying the operator and their IP.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

describe('the listener', () => {
  test('off until OPERATOR_PORT is set; on its own port, never the public one', async () => {
    expect(loadConfig({}).operator).toEqual({ host: '127.0.0.1', port: undefined });
    const off = await startHarness();
    try {
      expect(off.service.console).toBeUndefined();
    } finally {
      await off.close();
    }
    const consoleUrl = new URL(h.service.console?.url as string);
    expect(consoleUrl.hostname).toBe('127.0.0.1');
    expect(consoleUrl.port).not.toBe(new URL(h.url).port);
    // The console's pages are not on the public port.
    expect((await h.inject({ method: 'GET', url: '/enrol', headers: { accept: 'text/html' } })).statusCode).toBe(404);
    const page = await fetch(`${h.service.console?.url}/login`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Sign in to the console');
  });

  test('bad settings are refused naming the variable', () => {
    expect(() => loadConfig({ OPERATOR_PORT: 'abc' })).toThrow(new ConfigError('OPERATOR_PORT must be an integer from 0 to 65535, got "abc"'));
    expect(() => loadConfig({ OPERATOR_PORT: '3000' })).toThrow(new ConfigError('OPERATOR_PORT must differ from PORT (the public port), got "3000"'));
    expect(() => loadConfig({ OPERATOR_PORT: '4000', PORT: '4000' })).toThrow(/OPERATOR_PORT must differ from PORT/);
    expect(() => loadConfig({ OPERATOR_HOST: 'not a host' })).toThrow(new ConfigError('OPERATOR_HOST must be an IP address or a host name, got "not a host"'));
    expect(loadConfig({ OPERATOR_PORT: '4001', OPERATOR_HOST: '10.0.0.5' }).operator).toEqual({ host: '10.0.0.5', port: 4001 });
  });
});

describe('signing in', () => {
  test('link, password, forced enrolment, then password and code; every step audited with the operator and IP', async () => {
    const op = await signedInOperator(h, 'admin', '10.44.0.1');
    const home = await op.client.get('/');
    expect(home.status).toBe(200);
    expect(home.body).toContain(op.email);
    expect(home.headers['set-cookie']).toBeUndefined();
    const cookie = op.client.cookies.get('sp_operator');
    expect(cookie).toBeTruthy();

    // Sign out: the cookie no longer opens anything.
    const out = await op.client.post('/logout', { _csrf: home.csrf as string });
    expect(out.location).toBe('/login?notice=signed_out');
    const stale = consoleClient(h);
    stale.cookies.set('sp_operator', cookie as string);
    expect((await stale.get('/')).location).toBe('/login');

    // Password alone reaches only the code form.
    const login = await op.client.get('/login');
    const afterPassword = await op.client.post('/login', { email: op.email.toUpperCase(), password: PASSWORD, _csrf: login.csrf as string });
    expect(afterPassword.location).toBe('/login/code');
    expect((await op.client.get('/')).location).toBe('/login/code');
    const codeForm = await op.client.get('/login/code');
    // The code of the enrolment was spent: the same step does not work twice.
    const reused = await op.client.post('/login/code', { code: await totpCode(op.secret), _csrf: codeForm.csrf as string });
    expect(reused.status).toBe(401);
    const signedIn = await op.client.post('/login/code', { code: await totpCode(op.secret, 1), _csrf: codeForm.csrf as string });
    expect(signedIn.location).toBe('/');
    expect((await op.client.get('/')).status).toBe(200);

    const rows = (await listAudit(h.service.db.kysely, { limit: 50 })).filter((r) => r.actor === op.email || r.details.email === op.email).reverse();
    expect(rows.map((r) => [r.action, r.source, r.operatorId, r.ip])).toEqual([
      ['operator.create', 'cli', null, null],
      ['operator.password_set', 'console', op.operatorId, '10.44.0.1'],
      ['operator.two_factor_enable', 'console', op.operatorId, '10.44.0.1'],
      ['operator.sign_in', 'console', op.operatorId, '10.44.0.1'],
      ['operator.sign_out', 'console', op.operatorId, '10.44.0.1'],
      ['operator.sign_in_failed', 'console', op.operatorId, '10.44.0.1'],
      ['operator.sign_in', 'console', op.operatorId, '10.44.0.1'],
    ]);
  });

  test('the set-password link works once', async () => {
    const link = await createOperator(h.service.db, { email: `once-${Date.now()}@ops.example.com`, role: 'support', actor: 'test' });
    const client = consoleClient(h);
    const form = await client.get(`/set-password?token=${link.token}`);
    expect(form.headers['referrer-policy']).toBe('no-referrer');
    const short = await client.post('/set-password', { token: link.token, password: 'short', password_again: 'short', _csrf: form.csrf as string });
    expect(short.status).toBe(400);
    expect(short.body).toContain('Use at least 10 characters.');
    await client.post('/set-password', { token: link.token, password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string });
    const again = await consoleClient(h).get(`/set-password?token=${link.token}`);
    expect(again.status).toBe(410);
    expect(again.body).toMatch(/already used, on \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC/);
  });

  test("a client's dashboard password does not open the console, even for an operator of the same e-mail", async () => {
    const { email } = await signedUp(h);
    await createOperator(h.service.db, { email, role: 'admin', actor: 'test' });
    const stranger = consoleClient(h);
    const login = await stranger.get('/login');
    const refused = await stranger.post('/login', { email, password: PASSWORD, _csrf: login.csrf as string });
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('Incorrect e-mail or password.');
    expect(stranger.cookies.get('sp_operator')).toBeUndefined();
  });

  test('forms without their CSRF token are refused', async () => {
    const client = consoleClient(h);
    await client.get('/login');
    const noToken = await client.post('/login', { email: 'x@example.com', password: PASSWORD });
    expect(noToken.status).toBe(403);
    const op = await signedInOperator(h, 'admin');
    const out = await op.client.post('/logout', { _csrf: 'forged' });
    expect(out.status).toBe(403);
    expect((await op.client.get('/')).status).toBe(200);
  });

  test('failed sign-ins are throttled per e-mail: the sixth is refused before it is checked, even when right', async () => {
    const op = await signedInOperator(h, 'support', '10.44.1.1');
    const attacker = consoleClient(h, '10.44.1.2');
    const form = await attacker.get('/login');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await attacker.post('/login', { email: op.email, password: `wrong-${i}-password`, _csrf: form.csrf as string })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const right = await attacker.post('/login', { email: op.email, password: PASSWORD, _csrf: form.csrf as string });
    expect(right.status).toBe(429);
    expect(attacker.cookies.get('sp_operator')).toBeUndefined();
  });
});
