import { afterAll, beforeAll, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { lowBalanceAlerts } from '../../src/ledger/low-balance.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, signedUp } from '../support/web.js';

/**
 * The dashboard's low-balance alert: the settings form per mode (validation keeps the input and
 * changes nothing, CSRF), and the banner on the overview while the available balance is below
 * the threshold, gone once it is back.
 */

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const text = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
const thresholds = async (accountId: string) => Object.fromEntries((await lowBalanceAlerts(h.service.db.kysely, accountId)).map((a) => [a.mode, a.threshold]));

test('the settings form: bad input is refused with the reason and the input kept; save and remove per mode', async () => {
  const { client, email } = await signedUp(h, '10.8.0.1');
  const accountId = await accountIdOf(h, email);
  const empty = await client.get('/alerts');
  expect(empty.status).toBe(200);
  expect(empty.body).toContain('aria-current="page">Alerts<');
  expect(text(empty.body)).toContain('No low-balance alert is set for your live balance.');

  for (const [input, reason] of [
    ['', 'Enter a threshold in TON'],
    ['ten', 'Enter an amount in TON, like 25 or 2.5, with at most 9 decimal places.'],
    ['-5', 'Enter an amount in TON'],
    ['0', 'Enter an amount greater than 0.'],
    ['1.0000000001', 'at most 9 decimal places'],
    ['1e3', 'Enter an amount in TON'],
    ['1000000001', 'Enter at most 1000000000 TON.'],
  ] as const) {
    const refused = await client.submit('/alerts', { threshold: input });
    expect(refused.status, input).toBe(400);
    expect(text(refused.body)).toContain(reason);
    expect(refused.body).toContain(`value="${input}"`);
    expect(refused.body).toContain('aria-invalid="true"');
  }
  expect(await thresholds(accountId)).toEqual({ live: null, test: null });

  const saved = await client.submit('/alerts', { threshold: '12,5' });
  expect(saved.status).toBe(303);
  expect(saved.location).toBe('/alerts?notice=saved');
  expect(await thresholds(accountId)).toEqual({ live: parseTon('12.5'), test: null });
  const shown = await client.get(saved.location!);
  expect(text(shown.body)).toContain('Low-balance alert saved.');
  expect(shown.body).toContain('value="12.5"');

  // Test mode has its own threshold; a bad one leaves the saved one as it was.
  expect((await client.submit('/test/alerts', { threshold: '3' })).location).toBe('/test/alerts?notice=saved');
  expect((await client.submit('/alerts', { threshold: 'x' })).status).toBe(400);
  expect(await thresholds(accountId)).toEqual({ live: parseTon('12.5'), test: parseTon('3') });

  // No CSRF token: refused, nothing changed.
  const forged = await client.post('/alerts/remove', {});
  expect(forged.status).toBe(403);
  expect(await thresholds(accountId)).toEqual({ live: parseTon('12.5'), test: parseTon('3') });

  const removed = await client.submit('/alerts', {}, '/alerts/remove');
  expect(removed.location).toBe('/alerts?notice=removed');
  expect(await thresholds(accountId)).toEqual({ live: null, test: parseTon('3') });

  // Each change is in the activity log, with the value before and after; refusals are not.
  const changes = (await listAudit(h.service.db.kysely, { accountId, limit: 50 })).filter((r) => r.action === 'settings.change').reverse();
  expect(changes.map((r) => [r.mode, r.details.setting, r.details.from, r.details.to])).toEqual([
    ['live', 'low_balance_threshold', null, '12.5'],
    ['test', 'low_balance_threshold', null, '3'],
    ['live', 'low_balance_threshold', '12.5', null],
  ]);
  for (const r of changes) expect(r).toMatchObject({ actor: email, source: 'dashboard', details: { ip: '10.8.0.1' } });
  const activity = text((await client.get('/activity')).body);
  expect(activity).toContain('settings.change mode: live, setting: low_balance_threshold, from: 12.5, to: null');
});

test('signed out: the page and its forms send to the login page', async () => {
  const page = await h.inject({ method: 'GET', url: '/alerts' });
  expect(page.statusCode).toBe(303);
  const post = await h.inject({ method: 'POST', url: '/test/alerts', payload: 'threshold=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  expect(post.statusCode).toBe(303);
  expect(String(post.headers.location)).toMatch(/^\/login/);
});

test('the banner shows on the overview while a balance is below its threshold, in either mode viewed', async () => {
  const { client, email } = await signedUp(h, '10.8.0.2');
  const accountId = await accountIdOf(h, email);
  await h.credit(accountId, 'live', '5');
  const before = await client.get('/');
  expect(before.body).not.toContain('data-testid="low-balance-');

  // Set above the balance: the banner at once (no event: nothing crossed).
  await client.submit('/alerts', { threshold: '10' });
  for (const url of ['/', '/test', '/alerts']) {
    const page = await client.get(url);
    expect(page.body, url).toContain('data-testid="low-balance-live"');
    expect(text(page.body)).toContain('Your live balance is low: 5 TON available, below your alert threshold of 10 TON.');
    expect(page.body).not.toContain('data-testid="low-balance-test"');
  }

  // A top-up back to the threshold: gone.
  await h.credit(accountId, 'live', '5');
  expect((await client.get('/')).body).not.toContain('data-testid="low-balance-');
  // Down again (an operator debit): back.
  await adjustBalance(h.service.db, { accountId, mode: 'live', amount: -parseTon('0.5'), reason: 'debit' });
  expect((await client.get('/test')).body).toContain('data-testid="low-balance-live"');
  // Removing the alert removes the banner.
  await client.submit('/alerts', {}, '/alerts/remove');
  expect((await client.get('/')).body).not.toContain('data-testid="low-balance-');
});
