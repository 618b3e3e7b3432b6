import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generateApiKey } from '../../src/domain/api-key.js';
import { cliFor, parseJsonStdout, PROJECT_ROOT } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { independentlyVerified, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Suite 6: dependency and secret hygiene.
 *
 * - scripts/audit.mjs (`npm audit --omit=dev`): fails on a high or critical advisory not in
 *   scripts/audit-exceptions.json; an unreachable advisory service is reported, not failed.
 *   Run once per pass (SQLite project).
 * - No secret in the logs: `bin/starport serve` at LOG_LEVEL=trace, driven over real HTTP through
 *   the API and the dashboard, plus the operator CLI; everything the process printed is searched
 *   for every key, password, cookie, token and stored secret the flow used or created, webhook
 *   signing secrets included (endpoints created and rotated through the API and the dashboard,
 *   with deliveries signed by them, a failed attempt among them, to a receiver on loopback).
 */

describe.runIf(testEngine === 'sqlite')('scripts/audit.mjs', () => {
  const load = async () =>
    (await import(path.join(PROJECT_ROOT, 'scripts', 'audit.mjs') as string)) as { evaluate: (report: unknown, exceptions: unknown[]) => { status: string; lines: string[] } };
  const report = (severity: string, id = 'GHSA-aaaa-bbbb-cccc') => ({
    auditReportVersion: 2,
    vulnerabilities: { somepkg: { name: 'somepkg', severity, via: [{ source: 1, name: 'somepkg', title: 'A flaw', url: `https://github.com/advisories/${id}`, severity }] } },
    metadata: { vulnerabilities: { info: 0, low: 0, moderate: 0, high: severity === 'high' ? 1 : 0, critical: severity === 'critical' ? 1 : 0, total: 1 } },
  });

  test('high and critical advisories fail unless documented as exceptions; lower ones pass', async () => {
    const { evaluate } = await load();
    expect(evaluate(report('high'), []).status).toBe('failed');
    expect(evaluate(report('critical'), []).status).toBe('failed');
    expect(evaluate(report('moderate'), []).status).toBe('clean');
    const accepted = evaluate(report('high'), [{ id: 'GHSA-aaaa-bbbb-cccc', package: 'somepkg', reason: 'not reachable from our code' }]);
    expect(accepted.status).toBe('clean');
    expect(accepted.lines.join('\n')).toContain('accepted');
    expect(evaluate({ message: '405 Method Not Allowed' }, []).status).toBe('unreachable');
    expect(evaluate(undefined, []).status).toBe('unreachable');
  });

  test('the real audit of the production dependencies passes (or says clearly it could not run)', () => {
    const run = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'audit.mjs')], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 150_000 });
    console.log(run.stdout.trim());
    expect(run.stdout).toMatch(/dependency audit passed|DEPENDENCY AUDIT NOT DONE/);
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });
});

describe('no secret in the logs', () => {
  let database: FreshDatabase;
  let server: ServeProcess | undefined;
  let receiver: Receiver;
  beforeAll(async () => {
    database = await freshDatabase();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
    await database?.dispose();
  });

  test('serve at LOG_LEVEL=trace, the API, the dashboard and the CLI: nothing secret is printed', { timeout: 120_000 }, async () => {
    // The server starts below; the links need only their token here.
    const cli = cliFor({ ...database.env, PUBLIC_URL: 'https://starport.example' });
    const secrets: Record<string, string> = {};
    const operatorEmail = `logs-${Date.now()}@example.com`;
    const created = parseJsonStdout(await cli(['account', 'create', '--email', operatorEmail, '--json']));
    const accountId = created.account_id;
    expect(accountId, JSON.stringify(created)).toMatch(/^acct_/);
    const keysOf = (json: any): string[] => JSON.stringify(json).match(/sk_(?:live|test)_[0-9A-Za-z]{38}/g) ?? [];
    for (const [i, key] of keysOf(created).entries()) secrets[`created key ${i}`] = key;
    expect(Object.keys(secrets).length).toBe(2);
    await cli(['balance', 'credit', '--account', accountId, '--mode', 'test', '--amount', '5', '--reason', 'logs']);
    const reissued = parseJsonStdout(await cli(['key', 'reissue', '--account', accountId, '--mode', 'test', '--reason', 'rotation', '--json']));
    const testKey = keysOf(reissued)[0] as string;
    secrets['reissued key'] = testKey;
    const invite = parseJsonStdout(await cli(['account', 'invite', '--email', operatorEmail, '--json']));
    const inviteToken = /\/set-password\/([A-Za-z0-9_-]{43})/.exec(invite.url)?.[1] as string;
    expect(inviteToken).toBeTruthy();
    secrets['invite token'] = inviteToken;

    // Loopback webhooks allowed (the receiver), and quick retries: a failed attempt is retried at once.
    server = await startServe({ ...database.env, LOG_LEVEL: 'trace', TEST_FULFILMENT_DELAY_MS: '50', WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_DELAYS_MS: '30,30,30' });
    const base = server.url;
    // The API with good, revoked, unknown and garbled keys.
    const api = (key: string, init: RequestInit = {}, route = '/balance') =>
      fetch(`${base}/api/v1${route}`, { ...init, headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });
    const unknownKey = generateApiKey('test');
    secrets['unknown key'] = unknownKey;
    expect((await api(testKey)).status).toBe(200);
    expect((await api(secrets['created key 1'] as string)).status).toBe(401);
    expect((await api(unknownKey)).status).toBe(401);
    expect((await api(`${testKey}x`)).status).toBe(401);
    // A webhook endpoint, its secret rotated (the old one keeps signing during the grace period).
    const json = { 'content-type': 'application/json' };
    const endpoint = await api(testKey, { method: 'POST', headers: json, body: JSON.stringify({ url: `${receiver.url}?via=api` }) }, '/webhook_endpoints');
    expect(endpoint.status).toBe(201);
    const { id: endpointId, secret: firstSecret } = (await endpoint.json()) as { id: string; secret: string };
    secrets['webhook secret'] = firstSecret;
    const rotated = await api(testKey, { method: 'POST', headers: json, body: '{}' }, `/webhook_endpoints/${endpointId}/rotate_secret`);
    expect(rotated.status).toBe(200);
    const rotatedSecret = ((await rotated.json()) as { secret: string }).secret;
    secrets['rotated webhook secret'] = rotatedSecret;
    expect(rotatedSecret).not.toBe(firstSecret);
    // The first delivery fails (logged as a failed attempt), the retry succeeds.
    receiver.script.push({ status: 500, body: 'try again' });
    const order = await api(
      testKey,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'logs-order-1' },
        body: JSON.stringify({ product: 'stars', recipient: '@log_reader', quantity: 50 }),
      },
      '/orders',
    );
    expect(order.status).toBe(201);
    const orderId = ((await order.json()) as { id: string }).id;
    // A key pasted into the query string or a body field by mistake.
    await fetch(`${base}/api/v1/balance?key=${testKey}&api_key=${testKey}`, { headers: { authorization: `Bearer ${testKey}` } });
    await api(
      testKey,
      { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'logs-2' }, body: JSON.stringify({ key: testKey, password: 'body password' }) },
      '/orders',
    );

    // The dashboard: sign up, a wrong and a right login, a key reissue shown once.
    const jar = new Map<string, string>();
    const web = async (method: 'GET' | 'POST', route: string, form?: Record<string, string>) => {
      const response = await fetch(`${base}${route}`, {
        method,
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form && { 'content-type': 'application/x-www-form-urlencoded' }) },
        ...(form && { body: new URLSearchParams(form).toString() }),
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      const body = await response.text();
      return { status: response.status, body, csrf: /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? '' };
    };
    const email = `web-logs-${Date.now()}@example.com`;
    const password = 'a very secret passphrase for logs';
    const wrongPassword = 'a wrong passphrase, also secret';
    secrets.password = password;
    secrets['wrong password'] = wrongPassword;
    const signup = await web('GET', '/signup');
    secrets['signup csrf'] = signup.csrf;
    // Sign-up answers with both new keys, shown once: they are secrets the logs must not hold.
    const signedUp = await web('POST', '/signup', { email, password, _csrf: signup.csrf });
    expect(signedUp.status).toBe(200);
    secrets['sign-up live key'] = /sk_live_[0-9A-Za-z]{38}/.exec(signedUp.body)?.[0] as string;
    secrets['sign-up test key'] = /sk_test_[0-9A-Za-z]{38}/.exec(signedUp.body)?.[0] as string;
    expect(secrets['sign-up live key']).toBeTruthy();
    expect(secrets['sign-up test key']).toBeTruthy();
    secrets['session cookie'] = jar.get('sp_session') as string;
    secrets['pre-session cookie'] = jar.get('sp_pre') as string;
    const confirm = await web('GET', '/test/keys/reissue?mode=test');
    secrets['session csrf'] = confirm.csrf;
    const replaces = /name="replaces" value="([^"]+)"/.exec(confirm.body)?.[1] as string;
    const shown = await web('POST', '/test/keys/reissue', { mode: 'test', replaces, _csrf: confirm.csrf });
    const dashboardKey = /sk_test_[0-9A-Za-z]{38}/.exec(shown.body)?.[0];
    expect(dashboardKey).toBeTruthy();
    secrets['dashboard key'] = dashboardKey as string;
    await web('POST', '/logout', { _csrf: confirm.csrf });
    const login = await web('GET', '/login');
    expect((await web('POST', '/login', { email, password: wrongPassword, _csrf: login.csrf })).status).toBe(401);
    expect((await web('POST', '/login', { email, password, _csrf: login.csrf })).status).toBe(303);
    secrets['second session cookie'] = jar.get('sp_session') as string;
    expect((await web('GET', `/set-password/${inviteToken}`)).status).toBe(200);

    // The dashboard's webhook forms: add an endpoint (secret shown once), rotate it, send a test event.
    const webhooks = await web('GET', '/test/webhooks');
    expect(webhooks.status).toBe(200);
    const added = await web('POST', '/test/webhooks', { url: `${receiver.url}?via=dashboard`, _csrf: webhooks.csrf });
    expect(added.status, added.body.slice(0, 300)).toBe(200);
    secrets['dashboard webhook secret'] = /whsec_[A-Za-z0-9+/=]+/.exec(added.body)?.[0] as string;
    const dashboardEndpointId = /\/test\/webhooks\/(we_[0-9A-Za-z]+)/.exec(added.body)?.[1] as string;
    expect(dashboardEndpointId).toBeTruthy();
    const rotatedPage = await web('POST', `/test/webhooks/${dashboardEndpointId}/rotate`, { _csrf: webhooks.csrf });
    expect(rotatedPage.status).toBe(200);
    secrets['dashboard rotated webhook secret'] = /whsec_[A-Za-z0-9+/=]+/.exec(rotatedPage.body)?.[0] as string;
    expect(secrets['dashboard rotated webhook secret']).not.toBe(secrets['dashboard webhook secret']);
    expect((await web('POST', `/test/webhooks/${dashboardEndpointId}/test`, { _csrf: webhooks.csrf })).status).toBe(303);

    // Deliveries went out signed with these secrets: the order's events (after one failed
    // attempt) and the test event, each signed with the new and the rotated-out secret.
    const delivered = (via: string, type: string) => receiver.received.filter((r) => r.path.includes(`via=${via}`) && r.json?.type === type);
    await expect.poll(() => delivered('api', 'order.delivered').length + delivered('api', 'order.failed').length, { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => delivered('dashboard', 'webhook.test').length, { timeout: 20_000 }).toBeGreaterThan(0);
    const apiDeliveries = receiver.received.filter((r) => r.path.includes('via=api'));
    expect(apiDeliveries.some((r) => JSON.stringify(r.json).includes(orderId))).toBe(true);
    for (const r of apiDeliveries) {
      expect(independentlyVerified(r, firstSecret) && independentlyVerified(r, rotatedSecret), r.body).toBe(true);
    }
    const testEvent = delivered('dashboard', 'webhook.test')[0] as (typeof receiver.received)[number];
    expect(independentlyVerified(testEvent, secrets['dashboard webhook secret'] as string)).toBe(true);
    expect(independentlyVerified(testEvent, secrets['dashboard rotated webhook secret'] as string)).toBe(true);

    const exit = await server.stop('SIGTERM');
    server = undefined;
    // Stored secrets and their hashes: the CSRF HMAC key, key hashes (a hash of a key is as good as the key for lookup).
    const { openConfiguredDatabase } = await import('../../src/db/open.js');
    const { loadConfig } = await import('../../src/config.js');
    const db = await openConfiguredDatabase(loadConfig(database.env));
    try {
      for (const row of await db.kysely.selectFrom('dashboard_secrets').select(['name', 'value']).execute()) secrets[`stored ${row.name}`] = row.value;
      for (const row of await db.kysely.selectFrom('api_keys').select(['key_hash']).execute()) secrets[`key hash ${row.key_hash.slice(0, 6)}`] = row.key_hash;
      for (const row of await db.kysely.selectFrom('people').select(['password_hash']).where('password_hash', 'is not', null).execute())
        secrets['password hash'] = row.password_hash as string;
      // Every webhook secret stored: the four above (current and previous), nothing else.
      const stored = (await db.kysely.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).execute()).flatMap((row) => [row.secret, row.previous_secret]);
      const shown = ['webhook secret', 'rotated webhook secret', 'dashboard webhook secret', 'dashboard rotated webhook secret'].map((name) => secrets[name]);
      expect(stored.sort()).toEqual(shown.sort());
    } finally {
      await db.close();
    }
    secrets['session id hash'] = createHash('sha256')
      .update(secrets['session cookie'] as string)
      .digest('hex');

    const log = exit.stdout + exit.stderr;
    // The logs were captured, with the requests in them.
    expect(log).toContain('/api/v1/orders');
    expect(log).toContain('/test/keys/reissue');
    expect(log).toContain(`/api/v1/webhook_endpoints/${endpointId}/rotate_secret`);
    expect(log).toContain('webhook attempt failed');
    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret, what).toBeTruthy();
      expect(log.includes(secret), `${what} (${secret.slice(0, 10)}…) appears in the logs`).toBe(false);
    }
    console.log(`[hygiene] ${Object.keys(secrets).length} secrets searched for in ${log.split('\n').length} log lines: none found`);
  });
});
