import { afterAll, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { storedFragmentSession } from '../../src/live/fragment/session-store.js';
import { findPayment } from '../../src/live/live-payments.js';
import { listMails } from '../../src/notifications/outbox.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import { findOrderById } from '../../src/orders/order-store.js';
import { signedInOperator } from '../support/console.js';
import { FAKE_SESSION, type FakeFragment } from '../support/fragment/fake-fragment.js';
import { type Harness, type HarnessLogs, startHarness } from '../support/harness.js';
import { balanceOf, expectOk, expectRejected, pollUntil, postOrder, validate, waitForStatus } from '../support/http.js';
import { type LiveFakes, startLiveFakes } from '../support/live-fakes.js';

/**
 * The console's Live page against the fake Fragment and a paying wallet on the fake chain: an
 * admin pastes the Fragment cookies (stored as `fragment session set` stores them, audited by
 * name, the value nowhere else) and checks them; pauses live fulfilment for maintenance (new live
 * orders 503 with nothing reserved, queued ones wait, no upstream success resumes it) and resumes
 * it; the paying wallet's recent payments. Support reads and is refused every action.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const RENEWED = 'stel_ssid=console-ssid; stel_dt=-180; stel_token=console-secret-token-4711; stel_ton_token=console-ton-secret-0815';
const SECRETS = ['console-secret-token-4711', 'console-ton-secret-0815', 'console-ssid'];
const OPS = 'ops-console-live@example.com';

let fakes: LiveFakes;
let fragment: FakeFragment;
let h: Harness;
const logs: HarnessLogs = { level: 'trace', lines: [] };

beforeAll(async () => {
  fakes = await startLiveFakes();
  ({ fragment } = fakes);
  h = await startHarness({ ...fakes.env, OPERATOR_PORT: '0', OPERATOR_EMAILS: OPS }, { logs });
});
afterAll(async () => {
  await h?.close();
  await fakes?.close();
});
beforeEach(async () => {
  // Every test starts logged in with the configured session and nothing paused.
  fragment.setSession(FAKE_SESSION);
  await h.service.db.kysely.deleteFrom('live_settings').where('name', '=', 'fragment_session').execute();
  await h.service.db.kysely.updateTable('live_breaker').set({ paused_reason: null, paused_by: null, paused_at: null }).execute();
  await pollUntil(
    () => h.service.live.breaker.read(),
    (b) => b.state === 'closed',
    { what: 'the breaker to close', timeoutMs: 15_000 },
  );
});

const db = () => h.service.db.kysely;

function expectNoSecret(text: string, where: string) {
  for (const secret of SECRETS) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
}

test('support reads the Live page; every action is refused with 403 and changes nothing', async () => {
  const support = await signedInOperator(h, 'support');
  const page = await support.client.get('/live');
  expect(page.status).toBe(200);
  expect(page.body).toContain('aria-current="page">Live<');
  expect(page.body).toContain('data-testid="live-state">Available<');
  expect(page.body).toContain('Only an admin can pause live fulfilment');
  expect(page.body).not.toContain('action="/live/pause"');
  expect(page.body).not.toContain('name="cookies"');
  for (const [url, form] of [
    ['/live/session', { cookies: RENEWED }],
    ['/live/pause', { reason: 'not mine to pause' }],
    ['/live/resume', {}],
  ] as const) {
    const refused = await support.client.post(url, { ...form, _csrf: page.csrf as string });
    expect(refused.status, url).toBe(403);
    expect(refused.body).toContain('Admins only');
  }
  expect(await storedFragmentSession(db())).toBeUndefined();
  expect((await h.service.live.breaker.read()).operatorPause).toBeNull();
  const actions = (await listAudit(db(), { operatorId: support.operatorId, limit: 10 })).map((r) => r.action);
  expect(actions.filter((a) => !a.startsWith('operator.'))).toEqual([]);
});

test('bad cookie input answers 400 with the CLI message and stores nothing', async () => {
  const admin = await signedInOperator(h, 'admin');
  const page = await admin.client.get('/live');
  expect(page.body).toMatch(/<textarea id="cookies" name="cookies"[^>]* autocomplete="off"/);
  const cases: [string, string][] = [
    ['   \n', 'no cookies given'],
    ['just some text console-secret-token-4711', 'the session must be a Cookie header: name=value pairs separated by &quot;; &quot;'],
    ['stel_ssid=a; stel_dt=-180; stel_token=console-secret-token-4711', 'the session lacks the cookie(s) stel_ton_token'],
  ];
  for (const [cookies, message] of cases) {
    const refused = await admin.client.post('/live/session', { cookies, _csrf: page.csrf as string });
    expect(refused.status, cookies).toBe(400);
    expect(refused.body).toContain(message);
    expect(refused.body).toContain('Nothing was stored.');
    expectNoSecret(refused.body, 'the refusal page');
  }
  expect(await storedFragmentSession(db())).toBeUndefined();
  expect(await listAudit(db(), { action: 'fragment.session_set', operatorId: admin.operatorId, limit: 10 })).toEqual([]);
});

test('an admin pastes cookies: stored, used on the next call, audited by name; the value nowhere else', async () => {
  const admin = await signedInOperator(h, 'admin', '10.55.0.1');
  const { liveKey } = await h.account();
  // Fragment logged the old session out: the check says so, in Fragment's page's terms.
  fragment.setSession(RENEWED);
  const before = await admin.client.get('/live/check');
  expect(before.status).toBe(200);
  expect(before.body).toContain('data-testid="check-session"><strong>Not logged in</strong>');
  expect(before.body).toContain('data-testid="check-message">the Fragment page shows no logged-in session<');
  expect(before.body).toContain('Fragment session invalid');

  const stored = await admin.client.post('/live/session', { cookies: `Cookie: ${RENEWED}\n`, _csrf: before.csrf as string });
  expect(stored.status).toBe(303);
  expect(stored.location).toBe('/live/check?notice=session_set');
  expect((await storedFragmentSession(db()))?.header).toBe(RENEWED);

  const check = await admin.client.get(stored.location as string);
  expect(check.body).toContain('The Fragment session was stored');
  expect(check.body).toContain('data-testid="check-session">Logged in (from the stored session)<');
  expect(check.body).toContain('data-testid="check-verdict">Live trading can run.<');
  expect(check.body).toMatch(/data-testid="check-wallet">mnemonic valid, v5r1 <span class="mono wrap-any">UQ[\w-]{46}<\/span>; balance 1000 TON/);
  expect(check.body).toContain('data-testid="check-breaker">closed<');
  expectNoSecret(check.body, 'the check page');

  // The next call of the running service carries the new cookies.
  fragment.setRecipient('console_next');
  expectOk(await validate(h, liveKey, { product: 'stars', recipient: 'console_next', quantity: 50 }));
  expect(fragment.calls.at(-1)?.cookie).toBe(RENEWED);

  const [entry, ...more] = await listAudit(db(), { action: 'fragment.session_set', operatorId: admin.operatorId, limit: 10 });
  expect(more).toEqual([]);
  expect(entry).toMatchObject({ actor: admin.email, source: 'console', ip: '10.55.0.1', details: { cookies: ['stel_ssid', 'stel_dt', 'stel_token', 'stel_ton_token'] } });
  expectNoSecret(JSON.stringify(await listAudit(db(), { limit: 500 })), 'the audit log');
  expectNoSecret((await admin.client.get('/audit')).body, 'the audit page');
  expectNoSecret((await admin.client.get('/live')).body, 'the Live page');
  expect(
    logs.lines.some((line) => line.includes('/live/session')),
    'the logs were captured',
  ).toBe(true);
  expectNoSecret(logs.lines.join('\n'), 'the logs');
});

test('pause: live orders 503 with nothing reserved, queued ones wait, a successful probe does not resume; resume: orders flow', async () => {
  const admin = await signedInOperator(h, 'admin', '10.55.0.2');
  const a = await h.account({ live: '20' });
  const page = await admin.client.get('/live');
  const blank = await admin.client.post('/live/pause', { reason: '  ', _csrf: page.csrf as string });
  expect(blank.status).toBe(400);
  expect(blank.body).toContain('A reason is required to pause live fulfilment. Nothing was changed.');
  expect((await h.service.live.breaker.read()).operatorPause).toBeNull();

  const paused = await admin.client.post('/live/pause', { reason: 'rotating the wallet', _csrf: page.csrf as string });
  expect(paused.location).toBe('/live?notice=paused');
  const shown = await admin.client.get('/live');
  expect(shown.body).toContain('data-testid="live-state"><strong>Paused by operator</strong>: rotating the wallet');
  expect(shown.body).toContain('action="/live/resume"');
  expect((await admin.client.post('/live/pause', { reason: 'again', _csrf: page.csrf as string })).location).toBe('/live?notice=already_paused');

  await expectRejected(h, () => postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 503, 'live_unavailable');
  expect(await balanceOf(h, a.liveKey)).toMatchObject({ value: '20', reserved: '0' });
  const ready = (await h.inject({ method: 'GET', url: '/readyz' })).json();
  expect(ready.live).toMatchObject({ status: 'paused', paused_by: 'operator', reason: 'paused_by_operator' });
  expect(JSON.stringify(ready)).not.toContain('rotating the wallet');
  const metrics = (await h.inject({ method: 'GET', url: '/metrics' })).body;
  expect(metrics).toMatch(/^starport_live_paused 1$/m);
  expect(metrics).toMatch(/^starport_live_paused_by_operator 1$/m);
  const home = await admin.client.get('/');
  expect(home.body).toMatch(/data-testid="needs-operator-paused">1<\/strong> live fulfilment paused by an operator \(rotating the wallet\)/);
  expect(home.body).not.toContain('data-testid="needs-paused"');
  expect(home.body).toContain('data-testid="live-status">Paused by operator: rotating the wallet');

  // An order accepted just before the pause waits in the queue: the worker asks Fragment nothing for it.
  const inits = fragment.count('initBuyStarsRequest');
  const queued = await createOrder(
    { db: h.service.db, prices: h.service.live.prices, gate: new IdempotencyGate(), liveAvailable: () => true, onCreated: () => h.service.worker?.wake() },
    { accountId: a.accountId, mode: 'live', externalId: null, idempotencyKey: `queued-${Date.now()}`, product: 'stars', username: 'durov', quantity: 50 },
  );
  const waiting = await pollUntil(
    () => findOrderById(db(), queued.order.id),
    (o) => o?.status === 'processing' && o.nextRunAt !== null && o.nextRunAt > Date.now() + 5_000,
    { what: 'the queued order to be put back to wait' },
  );
  expect(waiting?.status).toBe('processing');
  expect(await findPayment(db(), queued.order.id)).toBeUndefined();
  expect(fragment.count('initBuyStarsRequest')).toBe(inits);

  // The upstream's breaker opens and its probe succeeds: the upstream half closes, the pause holds.
  await h.service.live.breaker.open('session_expired', 'test outage');
  await pollUntil(
    () => h.service.live.breaker.read(),
    (b) => b.state === 'closed',
    { what: 'the probe to close the upstream breaker', timeoutMs: 15_000 },
  );
  await h.service.live.breaker.recordSuccess();
  expect((await h.service.live.breaker.read()).operatorPause).toMatchObject({ reason: 'rotating the wallet', by: admin.email });
  await expectRejected(h, () => postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 503, 'live_unavailable');

  const resumed = await admin.client.post('/live/resume', { reason: 'wallet rotated', _csrf: page.csrf as string });
  expect(resumed.location).toBe('/live?notice=resumed');
  expect((await admin.client.post('/live/resume', { _csrf: page.csrf as string })).location).toBe('/live?notice=not_paused');
  expect((await h.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^starport_live_paused_by_operator 0$/m);

  const order = await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
  expectOk(order, 201);
  const delivered = await waitForStatus(h, a.liveKey, order.body.id, ['delivered', 'failed'], 30_000);
  expect(delivered.status).toBe('delivered');
  const txHash = delivered.events.find((e: { type: string }) => e.type === 'order.payment_sent').data.tx_hash as string;

  const audit = await listAudit(db(), { operatorId: admin.operatorId, limit: 10 });
  expect(audit.filter((r) => r.action.startsWith('live.')).map((r) => [r.action, r.reason, r.source, r.ip])).toEqual([
    ['live.resume', 'wallet rotated', 'console', '10.55.0.2'],
    ['live.pause', 'rotating the wallet', 'console', '10.55.0.2'],
  ]);
  const mails = await listMails(db(), { limit: 100, to: OPS });
  expect(mails.map((m) => m.subject)).toEqual(expect.arrayContaining(['Live fulfilment paused by an operator', 'Resolved: live fulfilment resumed by an operator']));

  // The wallet's recent payments: the order linked, its transaction with the explorer link.
  const live = await admin.client.get('/live');
  expect(live.body).toContain(`href="/orders/${order.body.id}"`);
  expect(live.body).toContain(`href="https://tonviewer.com/transaction/${txHash}"`);
  expect(live.body).toMatch(/data-testid="wallet-address">UQ[\w-]{46}</);
});
