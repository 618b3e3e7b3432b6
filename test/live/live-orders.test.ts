import { mnemonicNew } from '@ton/crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { storeFragmentSession } from '../../src/live/fragment/session-store.js';
import { findPayment } from '../../src/live/live-payments.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { listMails } from '../../src/notifications/outbox.js';
import { FAKE_SESSION, FakeFragment, FRAGMENT_ADDRESS } from '../support/fragment/fake-fragment.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, expectError, expectOk, expectRejected, getOrder, pollUntil, postOrder, validate, waitForStatus } from '../support/http.js';

/**
 * Live mode against the fake Fragment on loopback, through the real service (HTTP, worker,
 * database): live recipient checks, live order creation, the worker's Fragment step up to the
 * stored payment request, every failure outcome with the reserve released, and the circuit
 * breaker shared through the database.
 */

let fake: FakeFragment;
let h: Harness;
let mnemonic: string;
/** The operator's address: without SMTP_URL its alerts are kept (starport mail list). */
const OPS = 'ops-live@example.com';

const liveEnv = (extra: Record<string, string> = {}) => ({
  FRAGMENT_BASE_URL: fake.url,
  FRAGMENT_COOKIES: FAKE_SESSION,
  FRAGMENT_MAX_RPS: '1000',
  WALLET_MNEMONIC: mnemonic,
  LIVE_BREAKER_COOLDOWN_SECONDS: '1',
  LIVE_BREAKER_THRESHOLD: '3',
  OPERATOR_EMAILS: OPS,
  ...extra,
});

beforeAll(async () => {
  fake = await FakeFragment.start();
  mnemonic = (await mnemonicNew()).join(' ');
  h = await startHarness(liveEnv());
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const breakerState = async () => (await h.service.live.breaker.read()).state;

beforeEach(async () => {
  fake.setSession(FAKE_SESSION);
  fake.kyc = true;
  fake.tonConnected = true;
  fake.starNanotons = 4_900_000n;
  fake.setRecipient('durov', { name: 'Pavel Durov' });
  fake.setRecipient('ghost', { outcome: 'not_found' });
  fake.setRecipient('sessiontest');
  fake.setRecipient('somechannel', { outcome: 'not_user' });
  fake.setRecipient('closedacc', { outcome: 'cannot_receive' });
  fake.setRecipient('premiumuser', { name: 'Has Premium', outcome: 'premium_active' });
  // Each test starts with live fulfilment available (the probe closes a breaker left open).
  await pollUntil(breakerState, (s) => s === 'closed', { what: 'the breaker to close', timeoutMs: 15_000 });
});

const ordersOf = (accountId: string) => h.service.db.kysely.selectFrom('orders').selectAll().where('account_id', '=', accountId).execute();

async function ledgerClean() {
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
}

describe('POST /recipients/validate with a live key', () => {
  test('found and able to receive → 200 with Fragment display name; cached', async () => {
    const { liveKey } = await h.account();
    const res = await validate(h, liveKey, { product: 'stars', recipient: '@Durov', quantity: 50 });
    expectOk(res);
    expect(res.body).toEqual({ ok: true, recipient: { username: 'Durov', display_name: 'Pavel Durov', eligible: true } });
    const searches = fake.count('searchStarsRecipient');
    expectOk(await validate(h, liveKey, { product: 'stars', recipient: 'durov', quantity: 100 }));
    expect(fake.count('searchStarsRecipient'), 'the second check is answered from the cache').toBe(searches);
    expectOk(await validate(h, liveKey, { product: 'premium', recipient: 'durov', quantity: 6 }));
  });

  // docs/upstreams.md "Fragment: errors": each of Fragment's refusals is its reason.
  test.each([
    ['stars', 'ghost', 50, 'not_found', /^No Telegram account @ghost exists/],
    ['premium', 'Ghost', 6, 'not_found', /^No Telegram account @Ghost exists/],
    ['stars', 'somechannel', 50, 'not_a_user', /^@somechannel is a bot, channel or group/],
    ['premium', 'somechannel', 3, 'not_a_user', /^@somechannel is a bot, channel or group/],
    ['stars', 'closedacc', 50, 'not_eligible', /^@closedacc cannot receive Telegram Stars right now/],
    ['premium', 'premiumuser', 3, 'already_premium', /^@premiumuser already has Telegram Premium/],
  ])('%s for @%s → 400 recipient_invalid, details.reason %s', async (product, recipient, quantity, reason, message) => {
    const { liveKey } = await h.account();
    const res = await expectRejected(h, () => validate(h, liveKey, { product, recipient, quantity }), 400, 'recipient_invalid', 'recipient');
    expect(res.body.error).toEqual({ code: 'recipient_invalid', message: expect.stringMatching(message), param: 'recipient', details: { reason } });
    // A cached refusal keeps its reason.
    const again = await validate(h, liveKey, { product, recipient, quantity });
    expect(again.body.error.details).toEqual({ reason });
  });

  test.each([
    ['searchStarsRecipient', 'stars', 50, { json: { ok: true } }, 'not_found'],
    ['initGiftPremiumRequest', 'premium', 12, { error: 'User already has premium' }, 'already_premium'],
    ['searchPremiumGiftRecipient', 'premium', 3, { error: 'Please enter a username assigned to a user.' }, 'not_a_user'],
  ] as const)('Fragment answers %s with %j → details.reason %s', async (method, product, quantity, fault, reason) => {
    const { liveKey } = await h.account();
    const name = `variant_${reason}`;
    fake.setRecipient(name);
    fake.failNext(method, fault);
    const res = await expectRejected(h, () => validate(h, liveKey, { product, recipient: name, quantity }), 400, 'recipient_invalid', 'recipient');
    expect(res.body.error.details).toEqual({ reason });
  });

  test('premium already active does not stop stars', async () => {
    const { liveKey } = await h.account();
    expectOk(await validate(h, liveKey, { product: 'stars', recipient: 'premiumuser', quantity: 50 }));
  });

  test('Fragment down → 503 live_unavailable; the breaker opens after the threshold; the probe closes it', async () => {
    const { liveKey } = await h.account();
    fake.failNext('searchStarsRecipient', { status: 502 }, 3);
    for (const name of ['down1', 'down2', 'down3']) {
      await expectRejected(h, () => validate(h, liveKey, { product: 'stars', recipient: name, quantity: 50 }), 503, 'live_unavailable');
    }
    expect(await breakerState()).toBe('open');
    // While open, Fragment is not asked at all.
    const calls = fake.calls.length;
    await expectRejected(h, () => validate(h, liveKey, { product: 'stars', recipient: 'down4', quantity: 50 }), 503, 'live_unavailable');
    expect(fake.calls.length).toBe(calls);
    await pollUntil(breakerState, (s) => s === 'closed', { what: 'the probe to close the breaker' });
    expectOk(await validate(h, liveKey, { product: 'stars', recipient: 'durov', quantity: 77 }));
  });
});

describe('live orders: the Fragment step', () => {
  test('stars: pending → processing → payment request stored exactly as Fragment issued it', async () => {
    const a = await h.account({ live: '10' });
    const res = await postOrder(h, a.liveKey, { product: 'stars', recipient: '@durov', quantity: 50 });
    expectOk(res, 201);
    expect(res.body.status).toBe('fulfillment_pending');
    const id = res.body.id;
    const payment = await pollUntil(
      () => findPayment(h.service.db.kysely, id),
      (p) => p !== undefined,
      { what: 'the payment request' },
    );
    const invoice = fake.invoices.get(payment?.fragmentReqId ?? '');
    expect(invoice).toBeDefined();
    expect(payment).toMatchObject({
      destination: FRAGMENT_ADDRESS,
      amount: 245_000_000n,
      quotedAmount: 245_000_000n,
      payload: invoice?.payload,
      validUntil: (invoice?.validUntil ?? 0) * 1000,
      recipientName: 'Pavel Durov',
    });
    // The request was made for our wallet's account.
    const link = fake.calls.filter((c) => c.method === 'getBuyStarsLink').at(-1);
    expect(JSON.parse(link?.fields.account ?? '{}')).toMatchObject({
      address: expect.stringMatching(/^0:[0-9a-f]{64}$/),
      publicKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      chain: '-239',
    });
    const order = (await getOrder(h, a.liveKey, id)).body;
    expect(order.status).toBe('processing');
    expect(order.events.map((e: { type: string }) => e.type)).toEqual(['order.created', 'order.processing']);
    expect(await balanceOf(h, a.liveKey)).toMatchObject({ value: '9.75', reserved: '0.25' });
    await ledgerClean();
  });

  test('premium 12 months: the payment request for the premium invoice', async () => {
    const a = await h.account({ live: '20' });
    const res = await postOrder(h, a.liveKey, { product: 'premium', recipient: 'durov', quantity: 12 });
    expectOk(res, 201);
    const payment = await pollUntil(
      () => findPayment(h.service.db.kysely, res.body.id),
      (p) => p !== undefined,
      { what: 'the payment request' },
    );
    expect(payment?.amount).toBe(9_600_000_000n);
    expect(fake.invoices.get(payment?.fragmentReqId ?? '')?.comment).toMatch(/^Telegram Premium for 1 year \n\nRef#/);
  });

  test.each([
    ['ghost', 'stars', 50, 'not_found', /^No Telegram account @ghost exists/],
    ['somechannel', 'stars', 50, 'not_a_user', /^@somechannel is a bot, channel or group/],
    ['closedacc', 'stars', 50, 'not_eligible', /^@closedacc cannot receive Telegram Stars right now/],
    ['premiumuser', 'premium', 3, 'already_premium', /^@premiumuser already has Telegram Premium/],
  ])('@%s (%s) → failed %s, reserve released', async (recipient, product, quantity, reason, message) => {
    const a = await h.account({ live: '10' });
    const res = await postOrder(h, a.liveKey, { product, recipient, quantity });
    expectOk(res, 201);
    const order = await waitForStatus(h, a.liveKey, res.body.id);
    expect(order).toMatchObject({ status: 'failed', failure_reason: reason });
    expect(order.events.at(-1)).toMatchObject({ type: 'order.failed', data: { reason, message: expect.stringMatching(message) } });
    expect(order.events.map((e: { type: string }) => e.type)).not.toContain('order.attempt_failed');
    expect(await balanceOf(h, a.liveKey)).toMatchObject({ value: '10', reserved: '0' });
    await ledgerClean();
  });

  test('upstream amount + fees above the reserve + tolerance → failed price_moved, released, nothing stored', async () => {
    const a = await h.account({ live: '10' });
    fake.starNanotons = 5_300_000n; // 50 stars = 0.265 TON + 0.01 fees > 0.25 × 1.05
    const res = await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
    const order = await waitForStatus(h, a.liveKey, res.body.id);
    expect(order).toMatchObject({ status: 'failed', failure_reason: 'price_moved' });
    expect(await findPayment(h.service.db.kysely, res.body.id)).toBeUndefined();
    expect(await balanceOf(h, a.liveKey)).toMatchObject({ value: '10', reserved: '0' });
    await ledgerClean();
  });

  test('a transient error → order.attempt_failed, then a retry stores the payment request', async () => {
    const a = await h.account({ live: '10' });
    fake.failNext('initBuyStarsRequest', { status: 502 });
    const res = await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 60 });
    await pollUntil(
      () => findPayment(h.service.db.kysely, res.body.id),
      (p) => p !== undefined,
      { what: 'the retried payment request', timeoutMs: 15_000 },
    );
    const order = (await getOrder(h, a.liveKey, res.body.id)).body;
    expect(order.events.map((e: { type: string }) => e.type)).toEqual(['order.created', 'order.processing', 'order.attempt_failed']);
    expect(order.events[2].data).toEqual({ reason: 'upstream_error', message: expect.any(String) });
  });
});

describe('circuit breaker: upstream unavailable', () => {
  test('KYC required: breaker opens, the order waits, new live orders get 503 with nothing reserved, alerts; the probe resumes and the order proceeds', async () => {
    const a = await h.account({ live: '10' });
    fake.kyc = false;
    const res = await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
    expectOk(res, 201);
    await pollUntil(breakerState, (s) => s === 'open', { what: 'the breaker to open' });
    // The breaker opens just before the order's attempt_failed event is written: wait for both.
    const waiting = (
      await pollUntil(
        () => getOrder(h, a.liveKey, res.body.id),
        (r) => r.body.events.at(-1)?.type === 'order.attempt_failed',
        { what: 'order.attempt_failed' },
      )
    ).body;
    expect(waiting.status).toBe('processing');
    expect(waiting.events.at(-1)).toMatchObject({ type: 'order.attempt_failed', data: { reason: 'upstream_unavailable' } });

    await expectRejected(h, () => postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 503, 'live_unavailable');
    expect(await ordersOf(a.accountId)).toHaveLength(1);
    expect(await balanceOf(h, a.liveKey)).toMatchObject({ value: '9.75', reserved: '0.25' });

    const ready = await h.inject({ method: 'GET', url: '/readyz' });
    expect(ready.json()).toMatchObject({ ok: true, live: { status: 'paused', reason: 'kyc_required', kyc: { state: 'required' } } });
    const metrics = (await h.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^starport_live_paused 1$/m);
    expect(metrics).toMatch(/^starport_live_breaker_opened_total\{reason="kyc_required"\} 1$/m);

    fake.kyc = true;
    await pollUntil(breakerState, (s) => s === 'closed', { what: 'the probe to close the breaker' });
    await pollUntil(
      () => findPayment(h.service.db.kysely, res.body.id),
      (p) => p !== undefined,
      { what: 'the waiting order to proceed', timeoutMs: 15_000 },
    );
    expect((await h.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ live: { status: 'available', kyc: { state: 'verified' } } });
    expectOk(await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 201);
    await ledgerClean();
  });

  test('a session replaced at run time (stored in the database) is used without a restart', async () => {
    const { liveKey } = await h.account();
    const renewed = 'stel_ssid=renewed; stel_dt=-180; stel_token=renewed; stel_ton_token=renewed';
    fake.setSession(renewed);
    // (Orders of earlier tests may be moving in the background: no count of written rows here.)
    expectError(await validate(h, liveKey, { product: 'stars', recipient: 'sessiontest', quantity: 50 }), 503, 'live_unavailable');
    expect(await breakerState()).toBe('open');
    // The operator is told Fragment refuses the session, without the cookies.
    const opsMails = async (subject: RegExp) => (await listMails(h.service.db.kysely, { limit: 100, to: OPS })).filter((m) => subject.test(m.subject));
    const [refused] = await pollUntil(
      () => opsMails(/^Fragment refused the session: new cookies needed$/),
      (list) => list.length > 0,
      { what: 'the session alert' },
    );
    expect(refused?.body_text).toContain('starport fragment session set');
    for (const cookie of [renewed, FAKE_SESSION]) expect(`${refused?.body_text}${refused?.body_html}`).not.toContain(cookie.split(';')[0]);
    const resolvedBefore = (await opsMails(/^Resolved: live fulfilment resumed/)).length;
    await storeFragmentSession(h.service.db.kysely, renewed);
    await pollUntil(breakerState, (s) => s === 'closed', { what: 'the probe with the new session' });
    await pollUntil(
      () => opsMails(/^Resolved: live fulfilment resumed/),
      (list) => list.length === resolvedBefore + 1,
      { what: 'the resolved message' },
    );
    expectOk(await validate(h, liveKey, { product: 'stars', recipient: 'sessiontest', quantity: 50 }));
    expect(fake.calls.at(-1)?.cookie).toBe(renewed);
    await storeFragmentSession(h.service.db.kysely, FAKE_SESSION);
  });
});

describe('configuration', () => {
  test('without a wallet mnemonic live orders answer 503 live_unavailable, validate still works', async () => {
    const other = await startHarness({ ...liveEnv(), WALLET_MNEMONIC: '' });
    try {
      const a = await other.account({ live: '10' });
      await expectRejected(other, () => postOrder(other, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 503, 'live_unavailable');
      expectOk(await validate(other, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }));
      expect((await other.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ live: { status: 'not_configured', wallet: false, fragment_session: true } });
    } finally {
      await other.close();
    }
  });

  test('an invalid mnemonic refuses to start', async () => {
    await expect(startHarness({ ...liveEnv(), WALLET_MNEMONIC: Array.from({ length: 24 }, () => 'abandon').join(' ') })).rejects.toThrow(/not a valid TON mnemonic/);
  });

  test('orders waiting longer than LIVE_MAX_WAIT_SECONDS fail upstream_unavailable and release', async () => {
    const other = await startHarness(liveEnv({ LIVE_MAX_WAIT_SECONDS: '2', LIVE_BREAKER_COOLDOWN_SECONDS: '60' }));
    try {
      const a = await other.account({ live: '10' });
      fake.tonConnected = false; // need_ton: our wallet is not connected → unavailable
      const res = await postOrder(other, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
      expectOk(res, 201);
      const order = await waitForStatus(other, a.liveKey, res.body.id, ['failed'], 15_000);
      expect(order).toMatchObject({ failure_reason: 'upstream_unavailable' });
      expect(await balanceOf(other, a.liveKey)).toMatchObject({ value: '10', reserved: '0' });
      expect(await verifyLedger(other.service.db.kysely)).toEqual([]);
    } finally {
      await other.close();
      fake.tonConnected = true;
    }
  });
});

test('the readiness detail never shows the session', async () => {
  const body = (await h.inject({ method: 'GET', url: '/readyz' })).body;
  expect(body).not.toContain('fake-token');
});
