import { toNano } from '@ton/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { type Harness, startHarness } from '../support/harness.js';
import { deployWallet, type TestWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { accountIdOf, signedUp } from '../support/web.js';

/** The dashboard's top-up page lists the client's deposits the watcher credited. */
let h: Harness;
let off: Harness;
let fake: FakeToncenter;
let wallet: TestWallet;

beforeAll(async () => {
  fake = await FakeToncenter.start();
  wallet = await deployWallet(fake, 'web suite deposit wallet');
  [h, off] = await Promise.all([
    startHarness({ DEPOSIT_ADDRESS: wallet.address.toString(), TON_NETWORK: 'testnet', TON_API_URL: fake.url, DEPOSIT_POLL_MS: '50' }),
    startHarness(),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.close(), off?.close()]);
  await fake?.close();
});

describe('top-up page deposits', () => {
  test('amount, time, status and the transaction on the testnet explorer; only the account’s own', async () => {
    const { client, email } = await signedUp(h, '10.7.0.1');
    const accountId = await accountIdOf(h, email);
    const empty = await client.get('/top-up');
    expect(empty.body).toContain('No deposits yet');
    // Testnet: the address is shown with the testnet flag (0Q…).
    expect(empty.body).toContain(`id="deposit-address" class="copy-value">${wallet.address.toString({ bounceable: false, testOnly: true })}<`);
    const memo = await depositMemo(h.service.db, accountId);
    await transfer(fake, { to: wallet.address, value: 123_456_789_012n, text: memo });
    await transfer(fake, { to: wallet.address, value: toNano('1'), text: 'someone else' });
    await expect.poll(async () => (await client.get('/top-up')).body.includes('123.456789012 TON'), { timeout: 10_000, interval: 50 }).toBe(true);
    const page = await client.get('/top-up');
    const hash = fake
      .transactionsOf(wallet.address)
      .find((tx) => tx.inMessage?.info.type === 'internal' && tx.inMessage.info.value.coins === 123_456_789_012n)
      ?.hash()
      .toString('hex') as string;
    expect(page.body).toContain(`href="https://testnet.tonviewer.com/transaction/${hash}"`);
    expect(page.body).toContain('data-status="credited"');
    expect(page.body).not.toContain('No deposits yet');
    expect(page.body).not.toContain('>1 TON<');
    // Another client sees none of it.
    const { client: other } = await signedUp(h, '10.7.0.2');
    expect((await other.get('/top-up')).body).toContain('No deposits yet');
  });

  test('USDT: the amount in USDT, the jetton transfer link and its QR code, the conversion terms; a USDT deposit listed with its rate', async () => {
    const { deployJetton, fund, metadata, sendJetton } = await import('../support/ton/jetton.js');
    const usdt = await deployJetton(fake, 'web suite tether', metadata('https://tether.to/usdt-ton.json'));
    const usdtWallet = await deployWallet(fake, 'web suite usdt deposit wallet');
    const master = usdt.master.toString({ testOnly: true });
    const u = await startHarness({
      DEPOSIT_ADDRESS: usdtWallet.address.toString(),
      TON_NETWORK: 'testnet',
      TON_API_URL: fake.url,
      DEPOSIT_POLL_MS: '50',
      USDT_MASTER: master,
      TON_USD_RATE: '2.5',
    });
    try {
      const { client, email } = await signedUp(u, '10.7.0.4');
      const memo = await depositMemo(u.service.db, await accountIdOf(u, email));
      const address = usdtWallet.address.toString({ bounceable: false, testOnly: true });
      const tonPage = (await client.get('/top-up')).body;
      expect(tonPage).toContain('href="/top-up?asset=usdt"');
      const page = (await client.get('/top-up?asset=usdt&amount=25.5')).body;
      expect(page).toContain('Amount in USDT');
      expect(page).toContain(`href="ton://transfer/${address}?jetton=${master}&amp;amount=25500000&amp;text=${memo}"`);
      expect(page).toContain('src="/top-up/qr.svg?asset=usdt&amp;amount=25.5"');
      expect(page).toMatch(/converted when it arrives, at the TON\/USD rate of that moment less 1&nbsp;%, rounded down to the nanoton/);
      expect(page).toContain('At least 1 USDT per transfer');
      const qr = await client.get('/top-up/qr.svg?asset=usdt&amount=25.5');
      expect(qr.status).toBe(200);
      expect(qr.body).toContain('<svg');
      expect((await client.get('/top-up?asset=usdt&amount=1.0000001')).body).toContain('Enter an amount in USDT, like 25 or 12.5, with at most 6 decimal places.');
      await fund(fake, usdt, 'web suite client', 100_000_000n);
      await sendJetton(fake, usdt, { client: 'web suite client', to: usdtWallet.address, amount: 25_000_000n, text: memo });
      await expect.poll(async () => (await client.get('/top-up')).body.includes('9.9 TON'), { timeout: 10_000, interval: 50 }).toBe(true);
      expect((await client.get('/top-up')).body).toContain('25 USDT at 2.5 USD/TON');
    } finally {
      await u.close();
    }
  });

  test('without DEPOSIT_ADDRESS: live top-ups are not configured', async () => {
    const { client } = await signedUp(off, '10.7.0.3');
    const page = await client.get('/top-up');
    expect(page.body).toContain('Live top-ups are not configured yet.');
    expect(page.body).not.toContain('id="deposit-memo"');
  });
});
