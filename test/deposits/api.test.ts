import { PermissionError, Starport } from '@starport/sdk';
import { toNano } from '@ton/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { listMails } from '../../src/notifications/outbox.js';
import { notificationSwitches, setNotificationSwitches } from '../../src/notifications/settings.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service.js';
import { freshDatabase } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { startServe } from '../support/serve-process.js';
import { balanceOf, call, expectError, expectOk, TIMESTAMP } from '../support/http.js';
import { deployWallet, type TestWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';

/**
 * Live top-ups end to end: a real service (its worker runs the deposit watcher) against the
 * fake toncenter, and the two API endpoints, every response checked against the OpenAPI document.
 */
let h: Harness;
let off: Harness;
let fake: FakeToncenter;
let wallet: TestWallet;

beforeAll(async () => {
  fake = await FakeToncenter.start();
  wallet = await deployWallet(fake, 'api suite deposit wallet');
  [h, off] = await Promise.all([
    startHarness({ DEPOSIT_ADDRESS: wallet.address.toRawString(), TON_API_URL: fake.url, TON_API_KEY: 'api-suite-key', DEPOSIT_POLL_MS: '50' }),
    startHarness(),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), off?.close()]);
  await fake?.close();
});

/** The "Deposit credited" mails kept for an account's owner (no SMTP_URL: kept, as `mail list` shows). */
async function creditedMails(harness: Harness, accountId: string): Promise<string[]> {
  const { kysely } = harness.service.db;
  const { email } = await kysely.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow();
  const mails = await listMails(kysely, { limit: 50, to: email });
  return mails.filter((m) => m.subject === 'Deposit credited').map((m) => m.body_text);
}

const nonBounceable = () => wallet.address.toString({ urlSafe: true, bounceable: false });

describe('GET /deposit_address', () => {
  test('the address in non-bounceable form, the account’s memo and a ton:// link; test keys are refused', async () => {
    const a = await h.account();
    const res = await call(h, { path: '/deposit_address', key: a.liveKey });
    expectOk(res);
    expect(res.body).toEqual({
      ok: true,
      address: nonBounceable(),
      memo: expect.stringMatching(/^[A-HJ-NP-Z2-9]{11}$/),
      network: 'mainnet',
      transfer_link: `ton://transfer/${nonBounceable()}?text=${res.body.memo}`,
    });
    expect((await call(h, { path: '/deposit_address', key: a.liveKey })).body.memo).toBe(res.body.memo);
    expectError(await call(h, { path: '/deposit_address', key: a.testKey }), 403, 'live_key_required');
    expectError(await call(h, { path: '/deposits', key: a.testKey }), 403, 'live_key_required');
    expectError(await call(h, { path: '/deposits?limit=0', key: a.testKey }), 403, 'live_key_required');
  });

  test('not configured: 503 live_unavailable, and an empty deposit list', async () => {
    const a = await off.account();
    expectError(await call(off, { path: '/deposit_address', key: a.liveKey }), 503, 'live_unavailable');
    const list = await call(off, { path: '/deposits', key: a.liveKey });
    expectOk(list);
    expect(list.body).toEqual({ ok: true, object: 'list', data: [], has_more: false });
  });
});

describe('deposits end to end', () => {
  test('a transfer with the memo is credited by the service’s watcher and listed, paginated', async () => {
    const a = await h.account();
    const memo = (await call(h, { path: '/deposit_address', key: a.liveKey })).body.memo as string;
    await transfer(fake, { to: wallet.address, value: 123_456_789_012n, text: memo });
    await expect.poll(async () => (await balanceOf(h, a.liveKey)).value, { timeout: 10_000, interval: 25 }).toBe('123.456789012');
    await transfer(fake, { to: wallet.address, value: toNano('2'), text: memo });
    await transfer(fake, { to: wallet.address, value: toNano('3'), text: ` ${memo.toLowerCase()} ` });
    await expect.poll(async () => (await balanceOf(h, a.liveKey)).value, { timeout: 10_000, interval: 25 }).toBe('128.456789012');
    expect((await balanceOf(h, a.testKey)).value).toBe('0');

    const all = await call(h, { path: '/deposits', key: a.liveKey });
    expectOk(all);
    expect(all.body.has_more).toBe(false);
    expect(all.body.data.map((d: { amount: { value: string } }) => d.amount.value)).toEqual(['3', '2', '123.456789012']);
    const [newest] = all.body.data;
    const chainTx = fake.transactionsOf(wallet.address)[0];
    expect(newest).toEqual({
      id: expect.stringMatching(/^dep_/),
      asset: 'TON',
      amount: { value: '3', currency: 'TON' },
      usdt: null,
      status: 'credited',
      tx_hash: chainTx?.hash().toString('hex'),
      sender: expect.stringMatching(/^EQ/),
      created_at: new Date((chainTx?.now as number) * 1000).toISOString(),
      credited_at: expect.stringMatching(TIMESTAMP),
      explorer_url: `https://tonviewer.com/transaction/${chainTx?.hash().toString('hex')}`,
    });

    const page1 = await call(h, { path: '/deposits?limit=2', key: a.liveKey });
    expect(page1.body.data).toEqual(all.body.data.slice(0, 2));
    expect(page1.body.has_more).toBe(true);
    const page2 = await call(h, { path: `/deposits?limit=2&starting_after=${page1.body.data[1].id}`, key: a.liveKey });
    expect(page2.body).toEqual({ ok: true, object: 'list', data: all.body.data.slice(2), has_more: false });

    // Each credit is mailed to the owner, with its amount.
    await expect.poll(async () => (await creditedMails(h, a.accountId)).length, { timeout: 10_000 }).toBe(3);
    expect((await creditedMails(h, a.accountId)).some((text) => text.includes('123.456789012 TON was credited to your live balance.'))).toBe(true);

    // Another account sees none of them, and cannot page from them.
    const b = await h.account();
    expect((await call(h, { path: '/deposits', key: b.liveKey })).body.data).toEqual([]);
    expectError(await call(h, { path: `/deposits?starting_after=${newest.id}`, key: b.liveKey }), 400, 'invalid_request', 'starting_after');

    // An owner who switched the deposit e-mail off is credited and not mailed.
    const { person_id: person } = await h.service.db.kysely.selectFrom('memberships').select('person_id').where('account_id', '=', b.accountId).executeTakeFirstOrThrow();
    const switches = await notificationSwitches(h.service.db.kysely, person, b.accountId);
    switches.deposit_credited.email = false;
    await setNotificationSwitches(h.service.db.kysely, person, b.accountId, switches);
    const memoB = (await call(h, { path: '/deposit_address', key: b.liveKey })).body.memo as string;
    await transfer(fake, { to: wallet.address, value: toNano('4'), text: memoB });
    await expect.poll(async () => (await balanceOf(h, b.liveKey)).value, { timeout: 10_000, interval: 25 }).toBe('4');
    // Mails are written in the crediting transaction: none now means none ever.
    expect(await creditedMails(h, b.accountId)).toEqual([]);
  });

  test('the SDK lists deposits and reads the deposit address; a test key is a PermissionError', async () => {
    const a = await h.account();
    const sdk = new Starport({ apiKey: a.liveKey, baseUrl: `${h.url}/api/v1` });
    const address = await sdk.getDepositAddress();
    expect(address).toMatchObject({ address: nonBounceable(), network: 'mainnet' });
    await transfer(fake, { to: wallet.address, value: toNano('4.2'), text: address.memo });
    await expect.poll(async () => (await sdk.listDeposits()).data.length, { timeout: 10_000, interval: 25 }).toBe(1);
    const page = await sdk.listDeposits({ limit: 1 });
    expect(page.data[0]?.amount).toEqual({ value: '4.2', currency: 'TON' });
    expect(page.has_more).toBe(false);
    const testSdk = new Starport({ apiKey: a.testKey, baseUrl: `${h.url}/api/v1` });
    await expect(testSdk.listDeposits()).rejects.toMatchObject({ code: 'live_key_required' });
    await expect(testSdk.getDepositAddress()).rejects.toBeInstanceOf(PermissionError);
  });

  test('scale-out: two worker services watching one wallet credit every deposit once', async () => {
    const database = await freshDatabase();
    const env = { ...database.env, PORT: '0', DEPOSIT_ADDRESS: wallet.address.toString(), TON_API_URL: fake.url, TON_API_KEY: 'api-suite-key', DEPOSIT_POLL_MS: '50' };
    const logger = createLogger('silent');
    // Two workers as deployed: separate processes (this one, and `serve --role worker`). Two
    // services in one process share its event loop, and on SQLite a write waiting for the
    // other's lock would hold that loop (docs/architecture.md, "SQLite, embedded").
    const nodes = [await startService(loadConfig(env), logger, 'worker')];
    const other = await startServe({ ...env, LOG_LEVEL: 'error' }, 60_000, ['--role', 'worker']);
    try {
      const db = nodes[0]?.db as (typeof nodes)[number]['db'];
      const { createAccount } = await import('../../src/accounts/accounts.js');
      const { depositMemo } = await import('../../src/accounts/deposit-memo.js');
      const { readBalance } = await import('../../src/ledger/ledger.js');
      const { accountId } = await createAccount(db, `scale-${Date.now()}@example.com`);
      const memo = await depositMemo(db, accountId);
      for (let i = 1; i <= 6; i++) await transfer(fake, { to: wallet.address, value: toNano(String(i)), text: memo });
      await expect.poll(async () => (await readBalance(db.kysely, { accountId, mode: 'live' }))?.available, { timeout: 10_000, interval: 25 }).toBe(toNano('21'));
      // Both watchers kept polling past the deposits: still exactly one credit each.
      const polls = fake.callsTo('getTransactions').length;
      await expect.poll(() => fake.callsTo('getTransactions').length, { timeout: 10_000, interval: 25 }).toBeGreaterThan(polls + 4);
      expect((await readBalance(db.kysely, { accountId, mode: 'live' }))?.available).toBe(toNano('21'));
      const credits = await db.kysely.selectFrom('journal').select('id').where('account_id', '=', accountId).where('kind', '=', 'deposit').execute();
      expect(credits).toHaveLength(6);
      expect(await verifyLedger(db.kysely)).toEqual([]);
    } finally {
      await other.stop();
      for (const node of nodes) await node.stop();
      await database.dispose();
    }
  });

  test('USDT sent with the memo: credited by the service at TON_USD_RATE less 1 %, listed with its amount and rate, shown in the balance history', async () => {
    const { deployJetton, fund, metadata, sendJetton } = await import('../support/ton/jetton.js');
    const usdt = await deployJetton(fake, 'api suite tether', metadata('https://tether.to/usdt-ton.json'));
    const usdtWallet = await deployWallet(fake, 'api suite usdt deposit wallet');
    const u = await startHarness({
      DEPOSIT_ADDRESS: usdtWallet.address.toRawString(),
      TON_API_URL: fake.url,
      TON_API_KEY: 'api-suite-key',
      DEPOSIT_POLL_MS: '50',
      USDT_MASTER: usdt.master.toString(),
      TON_USD_RATE: '2.5',
    });
    try {
      const a = await u.account();
      const memo = (await call(u, { path: '/deposit_address', key: a.liveKey })).body.memo as string;
      await fund(fake, usdt, 'api suite client', 100_000_000n);
      await sendJetton(fake, usdt, { client: 'api suite client', to: usdtWallet.address, amount: 25_000_000n, text: memo });
      // 25 USDT ÷ 2.5 × 0.99
      await expect.poll(async () => (await balanceOf(u, a.liveKey)).value, { timeout: 10_000, interval: 25 }).toBe('9.9');
      const list = await call(u, { path: '/deposits', key: a.liveKey });
      expectOk(list);
      expect(list.body.data).toEqual([
        expect.objectContaining({
          asset: 'USDT',
          amount: { value: '9.9', currency: 'TON' },
          usdt: { amount: '25', rate: '2.5', rate_at: expect.stringMatching(TIMESTAMP) },
          status: 'credited',
        }),
      ]);
      const history = await call(u, { path: '/balance/history', key: a.liveKey });
      expectOk(history);
      expect(history.body.data[0].deposit.reference).toBe(`USDT deposit ${list.body.data[0].tx_hash}: 25 USDT at 2.5 USD/TON less 1 %`);
      expect(await creditedMails(u, a.accountId)).toEqual([expect.stringContaining('25 USDT (9.9 TON) was credited to your live balance.')]);
      const sdk = new Starport({ apiKey: a.liveKey, baseUrl: `${u.url}/api/v1` });
      expect((await sdk.listDeposits()).data[0]?.usdt).toEqual({ amount: '25', rate: '2.5', rate_at: expect.stringMatching(TIMESTAMP) });
    } finally {
      await u.close();
    }
  });

  test('bad pagination parameters are invalid_request naming the parameter', async () => {
    const a = await h.account();
    for (const limit of ['0', '101', '1.0', '-1', 'abc', '']) {
      expectError(await call(h, { path: `/deposits?limit=${limit}`, key: a.liveKey }), 400, 'invalid_request', 'limit');
    }
    expectError(await call(h, { path: '/deposits?limit=1&limit=2', key: a.liveKey }), 400, 'invalid_request', 'limit');
    // Not ids at all, among them a NUL byte that PostgreSQL would refuse if it were looked up.
    for (const cursor of ['dep_nope', 'a%00b', 'dep_%00', 'dep_%E2%82%AC', `dep_${'x'.repeat(200)}`]) {
      expectError(await call(h, { path: `/deposits?starting_after=${cursor}`, key: a.liveKey }), 400, 'invalid_request', 'starting_after');
    }
  });

  test('/readyz reports the watcher (lag, last poll, unmatched) and /metrics its lag', async () => {
    await transfer(fake, { to: wallet.address, value: toNano('1'), text: 'no such memo' });
    await expect.poll(async () => (await h.inject({ url: '/readyz' })).json().deposits?.unmatched, { timeout: 10_000, interval: 25 }).toBeGreaterThanOrEqual(1);
    const ready = (await h.inject({ url: '/readyz' })).json();
    expect(ready).toEqual({
      ok: true,
      live: expect.objectContaining({ status: 'not_configured' }),
      deposits: { lag_seconds: expect.any(Number), last_checked_at: expect.stringMatching(TIMESTAMP), unmatched: expect.any(Number) },
    });
    expect(ready.deposits.lag_seconds).toBeLessThan(120);
    const metrics = (await h.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/^starport_deposit_watcher_lag_seconds \d/m);
    expect(metrics).toMatch(/^starport_deposit_watcher_checked_age_seconds \d/m);
    expect(metrics).toMatch(/^starport_deposits_unmatched [1-9]/m);
    // The API key reached toncenter as a header, never in a URL.
    const polls = fake.callsTo('getTransactions');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((r) => r.apiKey === 'api-suite-key' && !r.url.includes('api-suite-key'))).toBe(true);
    // Without DEPOSIT_ADDRESS there is no watcher detail.
    expect((await off.inject({ url: '/readyz' })).json()).toEqual({ ok: true, live: expect.objectContaining({ status: 'not_configured' }) });
  });
});
