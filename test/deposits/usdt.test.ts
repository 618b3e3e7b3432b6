import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Address, toNano } from '@ton/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { parseDecimal } from '../../src/domain/decimal.js';
import { formatTon } from '../../src/domain/money.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { HttpRateFeed } from '../../src/live/pricing/rate-feed.js';
import { createLogger } from '../../src/logger.js';
import { assignDeposit, returnDeposit } from '../../src/deposits/settle.js';
import { listDeposits } from '../../src/deposits/store.js';
import { DepositWatcher, usdtRateFrom, type WatcherOptions } from '../../src/deposits/watcher.js';
import { ToncenterClient } from '../../src/ton/toncenter.js';
import { type Harness, startHarness } from '../support/harness.js';
import { deployWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { deployJetton, fund, metadata, mint, notificationBody, sendJetton, type TestJetton } from '../support/ton/jetton.js';

/**
 * USDT deposits (docs/operations.md "USDT top-ups") on the emulator behind the fake toncenter:
 * a jetton master and wallets compiled from test/support/ton/jetton/*.fc, clients sending USDT
 * the way wallet apps do, and a TON/USD rate feed over HTTP whose answers the test decides.
 */
let h: Harness;
let fake: FakeToncenter;
let usdt: TestJetton;
let rates: RateServer;
let seq = 0;
const USDT_METADATA = 'https://tether.to/usdt-ton.json';

interface RateServer {
  url: string;
  /** The USD/TON rate served, or undefined: HTTP 503. */
  rate: string | undefined;
  close(): Promise<void>;
}

async function rateServer(): Promise<RateServer> {
  const state: RateServer = { url: '', rate: '2.5', close: async () => undefined };
  const server = http.createServer((_request, response) => {
    if (state.rate === undefined) {
      response.writeHead(503).end('{}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(`{"rates":{"TON":{"prices":{"USD":${state.rate}}}}}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/rates`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}

beforeAll(async () => {
  [h, fake, rates] = await Promise.all([startHarness(), FakeToncenter.start(), rateServer()]);
  usdt = await deployJetton(fake, 'tether', metadata(USDT_METADATA));
}, 60_000);
afterAll(async () => {
  await Promise.all([h?.close(), fake?.close(), rates?.close()]);
});

const logger = createLogger('silent');
const ONE = 1_000_000n;

function watcher(
  address: Address,
  options: Partial<WatcherOptions> = {},
  feed = new HttpRateFeed({ kind: 'tonapi', url: rates.url, refreshMs: 0, maxAgeMs: 60_000 }),
): DepositWatcher {
  return new DepositWatcher({
    db: h.service.db,
    logger,
    client: new ToncenterClient({ baseUrl: fake.url, timeoutMs: 2000 }),
    address: address.toString(),
    minAmount: toNano('0.1'),
    pollMs: 50,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    usdt: { master: usdt.master.toString(), minUnits: ONE, spreadPercent: parseDecimal('1') as never, rate: usdtRateFrom(feed) },
    ...options,
  });
}

async function client(): Promise<{ accountId: string; memo: string; name: string }> {
  const { accountId } = await h.account();
  return { accountId, memo: await depositMemo(h.service.db, accountId), name: `client ${++seq}` };
}

const live = async (accountId: string) => (await readBalance(h.service.db.kysely, { accountId, mode: 'live' }))?.available;
const depositsOf = (address: Address) => h.service.db.kysely.selectFrom('deposits').selectAll().where('address', '=', address.toRawString()).orderBy('lt').execute();
const newWallet = async () => deployWallet(fake, `usdt deposit wallet ${++seq} ${Math.random()}`);

describe('USDT deposits', () => {
  test('USDT sent with the memo is credited once, converted at the feed rate less 1 %, rounded down (12.345678 USDT at 3.07 → 3.98117955 TON)', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 100n * ONE);
    rates.rate = '3.07';
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 12_345_678n, text: alice.memo });
    const w = watcher(wallet.address);
    const before = Date.now();
    const result = await w.pollOnce();
    expect(result.outcomes.filter((o) => o.kind !== 'ignored').map((o) => o.kind)).toEqual(['credited']);
    // 12.345678 ÷ 3.07 × 0.99 = 3.98117955048… TON: the nanoton below.
    expect(await live(alice.accountId)).toBe(3_981_179_550n);
    // The jetton wallet was asked of the master once, and kept.
    const kept = await h.service.db.kysely.selectFrom('jetton_wallets').selectAll().where('owner', '=', wallet.address.toRawString()).execute();
    expect(kept.map((k) => k.wallet)).toEqual([usdt.walletOf(wallet.address).toRawString()]);
    const asked = fake.callsTo('runGetMethod').length;
    // Polling again and re-reading from scratch (new watcher, cursor deleted) never credits twice.
    expect((await w.pollOnce()).outcomes).toEqual([]);
    await h.service.db.kysely.deleteFrom('deposit_cursors').where('address', '=', wallet.address.toRawString()).execute();
    expect((await watcher(wallet.address).pollOnce()).outcomes.filter((o) => o.kind !== 'ignored').map((o) => o.kind)).toEqual(['duplicate']);
    expect(fake.callsTo('runGetMethod').length).toBe(asked);
    expect(await live(alice.accountId)).toBe(3_981_179_550n);
    const [row] = await depositsOf(wallet.address);
    expect(row).toMatchObject({ status: 'credited', asset: 'USDT', account_id: alice.accountId, comment: alice.memo, rate: '3.07', amount: 3_981_179_550n });
    expect(String(row?.jetton_amount)).toBe('12345678');
    expect(Number(row?.rate_at)).toBeGreaterThanOrEqual(before);
    expect(row?.jetton_wallet).toBe(usdt.walletOf(wallet.address).toRawString());
    const journal = await h.service.db.kysely.selectFrom('journal').selectAll().where('account_id', '=', alice.accountId).where('kind', '=', 'deposit').execute();
    expect(journal.map((j) => j.reason)).toEqual([`USDT deposit ${row?.tx_hash}: 12.345678 USDT at 3.07 USD/TON less 1 %`]);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('a comment inline in the forward payload, and a larger forward amount, are read the same', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 100n * ONE);
    rates.rate = '2.5';
    await sendJetton(fake, usdt, {
      client: alice.name,
      to: wallet.address,
      amount: 25n * ONE,
      text: ` ${alice.memo.toLowerCase()} `,
      inlinePayload: true,
      forwardTon: toNano('0.05'),
    });
    await watcher(wallet.address).pollOnce();
    // 25 ÷ 2.5 × 0.99; the 0.05 TON the notification carried is not credited.
    expect(formatTon((await live(alice.accountId)) as bigint)).toBe('9.9');
  });

  test("a fake jetton copying USDT's metadata and code, and a hand-forged notification, credit nothing and are recorded as ignored", async () => {
    const wallet = await newWallet();
    const alice = await client();
    const fakeUsdt = await deployJetton(fake, `impostor ${++seq}`, metadata(USDT_METADATA));
    // Minted straight to the deposit wallet with a notification: the same message shape, from the fake's jetton wallet.
    await mint(fake, fakeUsdt, wallet.address, 1000n * ONE, { forwardTon: toNano('0.01'), text: alice.memo });
    // A notification sent by a plain wallet pretending to be a jetton wallet.
    const forger = await fake.blockchain.treasury(`forger ${seq}`);
    fake.record(await forger.send({ to: wallet.address, value: toNano('0.2'), body: notificationBody(500n * ONE, forger.address, alice.memo), bounce: false }));
    const result = await watcher(wallet.address).pollOnce();
    expect(result.outcomes.filter((o) => o.kind !== 'ignored').map((o) => o.kind)).toEqual(['unknown_jetton', 'unknown_jetton']);
    expect(await live(alice.accountId)).toBe(0n);
    const rows = await depositsOf(wallet.address);
    expect(rows.map((r) => [r.status, r.reason, r.asset, String(r.jetton_amount), r.account_id])).toEqual([
      ['ignored', 'unknown_jetton', 'jetton', '1000000000', null],
      ['ignored', 'unknown_jetton', 'jetton', '500000000', null],
    ]);
    expect(rows.map((r) => r.jetton_wallet)).toEqual([fakeUsdt.walletOf(wallet.address).toRawString(), forger.address.toRawString()]);
    // Not for the operator to settle: it is not money that arrived.
    await expect(assignDeposit(h.service.db, { txHash: rows[0]?.tx_hash as string, accountId: alice.accountId, actor: 'test' })).rejects.toThrow(
      /not the deposit wallet's USDT wallet/,
    );
  });

  test('a transfer without notification (forward amount 0) reaches only the jetton wallet: nothing is recorded', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 100n * ONE);
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 5n * ONE, text: alice.memo, forwardTon: 0n });
    // The tokens are on the deposit wallet's jetton wallet; the deposit wallet saw no message
    // (docs/operations.md "USDT top-ups": such a transfer is found on an explorer and settled by hand).
    expect(fake.transactionsOf(usdt.walletOf(wallet.address))).toHaveLength(1);
    await watcher(wallet.address).pollOnce();
    expect(await depositsOf(wallet.address)).toEqual([]);
    expect(await live(alice.accountId)).toBe(0n);
  });

  test('no fresh rate: the deposit waits (listed as awaiting_rate) and is credited later at the rate of that moment', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 100n * ONE);
    rates.rate = undefined;
    const feed = new HttpRateFeed({ kind: 'tonapi', url: rates.url, refreshMs: 0, maxAgeMs: 60_000 });
    const w = watcher(wallet.address, {}, feed);
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 30n * ONE, text: alice.memo });
    const first = await w.pollOnce();
    expect(first.outcomes.filter((o) => o.kind !== 'ignored').map((o) => o.kind)).toEqual(['awaiting_rate']);
    expect(first.creditedAwaiting).toBe(0);
    expect(await live(alice.accountId)).toBe(0n);
    const listed = await listDeposits(h.service.db.kysely, { accountId: alice.accountId, status: ['credited', 'awaiting_rate'], limit: 10 });
    expect(listed.map((d) => [d.status, d.amount, d.jettonAmount, d.rate, d.creditedAt])).toEqual([['awaiting_rate', 0n, 30n * ONE, null, null]]);
    // Still none: still waiting, the cursor moved on, nothing read twice.
    expect((await w.pollOnce()).creditedAwaiting).toBe(0);
    rates.rate = '3';
    const at = Date.now();
    const second = await w.pollOnce();
    expect(second.outcomes).toEqual([]);
    expect(second.creditedAwaiting).toBe(1);
    // 30 ÷ 3 × 0.99 = 9.9 TON, at the rate of the moment it was credited.
    expect(await live(alice.accountId)).toBe(9_900_000_000n);
    const [row] = await depositsOf(wallet.address);
    expect(row).toMatchObject({ status: 'credited', rate: '3', credited_by: 'watcher' });
    expect(Number(row?.rate_at)).toBeGreaterThanOrEqual(at);
    // A second watcher finds nothing left to credit.
    rates.rate = '1';
    expect((await watcher(wallet.address).pollOnce()).creditedAwaiting).toBe(0);
    expect(await live(alice.accountId)).toBe(9_900_000_000n);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('below USDT_DEPOSIT_MIN, without a memo or with an unknown one: unmatched, then assigned at the current rate or returned', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 100n * ONE);
    rates.rate = '2';
    const { checkCharacter } = await import('../../src/accounts/deposit-memo.js');
    const stranger = `ABCDEFGHJK${checkCharacter('ABCDEFGHJK')}`;
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 999_999n, text: alice.memo });
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 4n * ONE });
    await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: 6n * ONE, text: stranger });
    await watcher(wallet.address).pollOnce();
    const rows = await depositsOf(wallet.address);
    expect(rows.map((r) => [r.status, r.reason, r.asset, String(r.jetton_amount), r.amount])).toEqual([
      ['unmatched', 'below_minimum', 'USDT', '999999', 0n],
      ['unmatched', 'no_comment', 'USDT', '4000000', 0n],
      ['unmatched', 'memo_unknown', 'USDT', '6000000', 0n],
    ]);
    expect(await live(alice.accountId)).toBe(0n);
    // Assign converts at the rate given (the CLI asks the feed); without one it refuses.
    const tx = rows[1]?.tx_hash as string;
    await expect(
      assignDeposit(h.service.db, { txHash: tx, accountId: alice.accountId, actor: 'op', usdt: { rate: undefined, spreadPercent: parseDecimal('1') as never } }),
    ).rejects.toThrow(/no fresh rate/);
    const assigned = await assignDeposit(h.service.db, {
      txHash: tx,
      accountId: alice.accountId,
      actor: 'op',
      usdt: { rate: { rate: parseDecimal('2') as never, at: 1_700_000_000_000 }, spreadPercent: parseDecimal('1') as never },
    });
    expect([assigned.status, assigned.amount, assigned.rate, assigned.rateAt]).toEqual(['credited', 1_980_000_000n, '2', 1_700_000_000_000]);
    expect(await live(alice.accountId)).toBe(1_980_000_000n);
    const returned = await returnDeposit(h.service.db, { txHash: rows[2]?.tx_hash as string, actor: 'op' });
    expect(returned.status).toBe('returned');
    const audit = await h.service.db.kysely
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', 'in', ['deposit.assign', 'deposit.return'])
      .orderBy('id', 'desc')
      .limit(2)
      .execute();
    expect(audit.map((a) => [a.action, JSON.parse(String(a.details)).usdt_amount])).toEqual(
      expect.arrayContaining([
        ['deposit.return', '6'],
        ['deposit.assign', '4'],
      ]),
    );
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('a backlog of mixed TON and USDT deposits, read in small pages by a watcher stopped mid-walk and a restarted one: each credited once', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await fund(fake, usdt, alice.name, 1000n * ONE);
    rates.rate = '2';
    let expected = 0n;
    for (let i = 1; i <= 8; i++) {
      await transfer(fake, { to: wallet.address, value: toNano(String(i)), text: alice.memo });
      await sendJetton(fake, usdt, { client: alice.name, to: wallet.address, amount: BigInt(i) * 10n * ONE, text: alice.memo });
      // i TON, and i×10 USDT = i×5 TON less 1 %.
      expected += toNano(String(i)) + (BigInt(i) * 10n * toNano('1') * 99n) / 200n;
    }
    const small = { pageSize: 3, maxPages: 2 };
    let seen = 0;
    const first = watcher(wallet.address, {
      ...small,
      onOutcome: (o) => {
        if (o.kind === 'credited' && ++seen === 5) void first.stop();
      },
    });
    await first.pollOnce();
    await first.pollOnce();
    expect(seen).toBe(5);
    const restarted = watcher(wallet.address, small);
    for (let poll = 0; poll < 30; poll++) {
      const result = await restarted.pollOnce();
      if (result.fetched === 0) break;
    }
    // Two watchers over the whole history again: nothing more.
    await Promise.all([watcher(wallet.address, small).pollOnce(), watcher(wallet.address, { pageSize: 2, maxPages: 3 }).pollOnce()]);
    const rows = await depositsOf(wallet.address);
    expect(rows.map((r) => `${r.asset} ${r.status}`).sort()).toEqual([...Array(8).fill('TON credited'), ...Array(8).fill('USDT credited')]);
    expect(await live(alice.accountId)).toBe(expected);
    const journal = await h.service.db.kysely.selectFrom('journal').select('reason').where('account_id', '=', alice.accountId).where('kind', '=', 'deposit').execute();
    expect(journal).toHaveLength(16);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });
});
