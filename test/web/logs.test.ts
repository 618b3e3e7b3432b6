import { Writable } from 'node:stream';
import { generate } from 'otplib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import type { Harness } from '../support/harness.js';
import { signedInOperator, totpCode as operatorCode } from '../support/console.js';
import { accountIdOf, newEmail, PASSWORD, WebClient } from '../support/web.js';

/**
 * Secrets never reach the logs, even at level debug: passwords, session cookies, CSRF tokens,
 * new API keys (shown once), set-password and team invite link tokens, TOTP secrets and codes,
 * recovery codes; and a key reissued in the operator console.
 */
let database: FreshDatabase;
let service: RunningService;
const lines: string[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({ PORT: '0', OPERATOR_PORT: '0', TEST_FULFILMENT_DELAY_MS: '100', ...database.env });
  service = await startService(config, createLogger('debug', sink));
});
afterAll(async () => {
  await service?.stop();
  await database?.dispose();
});

test('no secret appears in the logs', async () => {
  const h = { inject: service.app.inject.bind(service.app), service } as unknown as Harness;
  const client = new WebClient(h);
  const email = newEmail('logs');
  expect((await client.signUp(email)).status).toBe(200);
  const confirm = await client.get('/test/keys/reissue?mode=test');
  const replaces = /name="replaces" value="([^"]+)"/.exec(confirm.body)?.[1] as string;
  const shown = await client.post('/test/keys/reissue', { mode: 'test', replaces, _csrf: confirm.csrf as string });
  const key = /id="new-key"[^>]*value="([^"]+)"/.exec(shown.body)?.[1] as string;
  expect(key).toMatch(/^sk_test_/);
  const link = await issuePasswordLink(service.db, email);
  const form = await client.get(`/set-password/${link.token}`);
  await client.post(`/set-password/${link.token}`, { password: 'a new log-safe password', password_again: 'a new log-safe password', _csrf: form.csrf as string });
  await client.post('/test/top-up', { amount: '1', _csrf: 'wrong' });
  // Two-factor: the TOTP secret, a code and the recovery codes; a team invite's token.
  const enrol = await client.get('/account/two-factor');
  const totpSecret = /id="totp-secret"[^>]*>([A-Z2-7]+)</.exec(enrol.body)?.[1] as string;
  const totpCode = await generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) });
  const codesPage = await client.post('/account/two-factor', { code: totpCode, _csrf: enrol.csrf as string });
  const recovery = [...codesPage.body.matchAll(/<li><code>([a-z2-7]{5}-[a-z2-7]{5})<\/code><\/li>/g)].map((m) => m[1] as string);
  expect(recovery).toHaveLength(10);
  const invited = await client.submit('/team', { email: newEmail('invited'), role: 'viewer' }, '/team/invite');
  const inviteToken = /\/invite\/([A-Za-z0-9_-]{43})</.exec(invited.body)?.[1] as string;
  expect(inviteToken).toBeTruthy();
  const invitePage = await new WebClient(h).get(`/invite/${inviteToken}`);
  expect(invitePage.status).toBe(200);
  const session = client.session as string;
  await client.logOut();
  // The console: an admin reissues the account's live key, shown once in the answer.
  const admin = await signedInOperator(h, 'admin');
  const accountId = await accountIdOf(h, email);
  const accountPage = await admin.client.get(`/accounts/${accountId}`);
  const reissued = await admin.client.post(`/accounts/${accountId}/keys/reissue`, {
    mode: 'live',
    reason: 'logs',
    code: await operatorCode(admin.secret, 1),
    _csrf: accountPage.csrf as string,
  });
  const consoleKey = /data-testid="new-key">([^<]+)</.exec(reissued.body)?.[1] as string;
  expect(consoleKey).toMatch(/^sk_live_/);

  const log = lines.join('');
  expect(log).toContain('dashboard key reissued'); // the logs were captured
  for (const secret of [
    session,
    PASSWORD,
    'a new log-safe password',
    key,
    consoleKey,
    admin.secret,
    admin.client.cookies.get('sp_operator') as string,
    link.token,
    confirm.csrf as string,
    client.cookies.get('sp_pre') as string,
    totpSecret,
    totpCode,
    inviteToken,
    ...recovery,
  ]) {
    expect(log, `a secret in the logs: ${secret.slice(0, 12)}…`).not.toContain(secret);
  }
});
