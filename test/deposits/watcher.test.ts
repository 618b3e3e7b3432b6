import { type Address, toNano } from '@ton/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { depositMemo, MEMO_ALPHABET } from '../../src/accounts/deposit-memo.js';
import { formatTon } from '../../src/domain/money.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createLogger } from '../../src/logger.js';
import { readCursor, readWalk } from '../../src/deposits/progress.js';
import { listDeposits } from '../../src/deposits/store.js';
import { watcherStatus } from '../../src/deposits/status.js';
import { DepositWatcher, type WatcherOptions } from '../../src/deposits/watcher.js';
import { ToncenterClient } from '../../src/ton/toncenter.js';
import { type Harness, startHarness } from '../support/harness.js';
import { deployWallet, transfer, twoCellComment, walletSend } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';

/**
 * The deposit watcher against a fake toncenter v2 on loopback whose transactions are real ones
 * executed by @ton/sandbox: real BOCs, real JSON shapes, real paging.
 */
let h: Harness;
let fake: FakeToncenter;
let walletSeq = 0;

beforeAll(async () => {
  [h, fake] = await Promise.all([startHarness(), FakeToncenter.start()]);
});
afterAll(async () => {
  await Promise.all([h?.close(), fake?.close()]);
});

const logger = createLogger('silent');

function watcher(address: Address, options: Partial<WatcherOptions> = {}): DepositWatcher {
  return new DepositWatcher({
    db: h.service.db,
    logger,
    client: new ToncenterClient({ baseUrl: fake.url, apiKey: 'test-api-key', timeoutMs: 2000 }),
    address: address.toString(),
    minAmount: toNano('0.1'),
    pollMs: 50,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}

async function client(): Promise<{ accountId: string; memo: string }> {
  const { accountId } = await h.account();
  return { accountId, memo: await depositMemo(h.service.db, accountId) };
}

const live = async (accountId: string) => (await readBalance(h.service.db.kysely, { accountId, mode: 'live' }))?.available;
const depositsOf = (address: Address) => h.service.db.kysely.selectFrom('deposits').selectAll().where('address', '=', address.toRawString()).orderBy('lt').execute();

async function newWallet() {
  return deployWallet(fake, `deposit wallet ${++walletSeq} ${Math.random()}`);
}

describe('crediting', () => {
  test('a deposit with the right memo is credited once, to the nanoton (123.456789012 TON)', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await transfer(fake, { to: wallet.address, value: 123_456_789_012n, text: alice.memo });
    const w = watcher(wallet.address);
    const first = await w.pollOnce();
    // The wallet's funding reached it undeployed (aborted: not a deposit), its deployment
    // (external-in) is skipped, the transfer credited.
    expect(first.outcomes.map((o) => o.kind)).toEqual(['ignored', 'ignored', 'credited']);
    expect(await live(alice.accountId)).toBe(123_456_789_012n);
    expect(formatTon((await live(alice.accountId)) as bigint)).toBe('123.456789012');
    // Polling again, and re-reading from scratch (cursor deleted), never credits twice.
    expect((await w.pollOnce()).outcomes).toEqual([]);
    await h.service.db.kysely.deleteFrom('deposit_cursors').where('address', '=', wallet.address.toRawString()).execute();
    expect((await w.pollOnce()).outcomes.map((o) => o.kind)).toEqual(['ignored', 'ignored', 'duplicate']);
    expect(await live(alice.accountId)).toBe(123_456_789_012n);
    const rows = await depositsOf(wallet.address);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'credited', account_id: alice.accountId, credited_by: 'watcher', comment: alice.memo, reason: null });
    const journal = await h.service.db.kysely.selectFrom('journal').selectAll().where('account_id', '=', alice.accountId).where('kind', '=', 'deposit').execute();
    expect(journal).toHaveLength(1);
    expect(BigInt(journal[0]?.available_delta as bigint)).toBe(123_456_789_012n);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('memo matching is exact after trimming and case-folding; a memo spanning two cells is read whole', async () => {
    const wallet = await newWallet();
    const [a, b, c] = [await client(), await client(), await client()];
    await transfer(fake, { to: wallet.address, value: toNano('1'), text: `  ${a.memo.toLowerCase()}\n` });
    // 125 spaces fill the root cell (123 bytes after the op): the memo lives in the second cell.
    await transfer(fake, { to: wallet.address, value: toNano('2'), text: `${' '.repeat(125)}${b.memo}` });
    // Split by hand in the middle of the memo.
    await transfer(fake, { to: wallet.address, value: toNano('3'), body: twoCellComment(c.memo.slice(0, 4), c.memo.slice(4)) });
    // Exact: a memo inside a sentence is not a match.
    await transfer(fake, { to: wallet.address, value: toNano('4'), text: `for ${a.memo}` });
    const result = await watcher(wallet.address).pollOnce();
    expect(result.outcomes.filter((o) => o.kind !== 'ignored').map((o) => o.kind)).toEqual(['credited', 'credited', 'credited', 'unmatched']);
    expect([await live(a.accountId), await live(b.accountId), await live(c.accountId)]).toEqual([toNano('1'), toNano('2'), toNano('3')]);
    const unmatched = (await depositsOf(wallet.address)).filter((d) => d.status === 'unmatched');
    expect(unmatched.map((d) => [d.reason, d.comment])).toEqual([['memo_invalid', `for ${a.memo}`]]);
  });

  test('a memo with one wrong character goes to unmatched, never to another account', async () => {
    const wallet = await newWallet();
    const victim = await client();
    // Every single-character substitution and every adjacent swap of the memo is refused by the check character.
    const typos = new Set<string>();
    for (let i = 0; i < victim.memo.length; i++) {
      for (const ch of MEMO_ALPHABET) if (ch !== victim.memo[i]) typos.add(victim.memo.slice(0, i) + ch + victim.memo.slice(i + 1));
      if (i + 1 < victim.memo.length && victim.memo[i] !== victim.memo[i + 1]) {
        typos.add(victim.memo.slice(0, i) + victim.memo[i + 1] + victim.memo[i] + victim.memo.slice(i + 2));
      }
    }
    const { memoOf } = await import('../../src/deposits/classify.js');
    for (const typo of typos) expect(memoOf(typo), typo).toEqual({ ok: false, reason: 'memo_invalid' });
    // On chain: a typo of an existing account's memo, and a well-formed memo nobody holds.
    const typo = [...typos][7] as string;
    const { checkCharacter } = await import('../../src/accounts/deposit-memo.js');
    const stranger = `ABCDEFGHJK${checkCharacter('ABCDEFGHJK')}`;
    await transfer(fake, { to: wallet.address, value: toNano('5'), text: typo });
    await transfer(fake, { to: wallet.address, value: toNano('6'), text: stranger });
    await transfer(fake, { to: wallet.address, value: toNano('7') });
    await watcher(wallet.address).pollOnce();
    const rows = await depositsOf(wallet.address);
    expect(rows.map((r) => [r.status, r.reason, r.account_id])).toEqual([
      ['unmatched', 'memo_invalid', null],
      ['unmatched', 'memo_unknown', null],
      ['unmatched', 'no_comment', null],
    ]);
    expect(await live(victim.accountId)).toBe(0n);
  });

  test('bounced, aborted, zero-value, external-in and outgoing transactions are not deposits; below-minimum is unmatched', async () => {
    const wallet = await newWallet();
    const alice = await client();
    const nowhere = (await deployWallet(fake, `elsewhere ${Math.random()}`)).address;
    const uninit = (await import('@ton/core')).Address.parse(`0:${'7'.repeat(64)}`);
    // Outgoing: an external order of the deposit wallet sending TON away.
    await walletSend(fake, wallet, [{ to: nowhere, value: toNano('1') }]);
    // Bounced: a bounceable payout to an account that does not exist comes back.
    await walletSend(fake, wallet, [{ to: uninit, value: toNano('0.5'), bounce: true }]);
    // Zero value, with a valid memo: no gas, compute skipped, aborted.
    await transfer(fake, { to: wallet.address, value: 0n, text: alice.memo });
    // Below the minimum, with a valid memo.
    await transfer(fake, { to: wallet.address, value: toNano('0.09'), text: alice.memo });
    const w = watcher(wallet.address);
    await w.pollOnce();
    const kinds = fake
      .transactionsOf(wallet.address)
      .reverse()
      .map((tx) => {
        const info = tx.inMessage?.info;
        return info?.type === 'internal' ? (info.bounced ? 'bounced' : 'internal') : info?.type;
      });
    // funding, deploy, outgoing, bounce order, bounced return, zero-value, below-minimum
    expect(kinds).toEqual(['internal', 'external-in', 'external-in', 'external-in', 'bounced', 'internal', 'internal']);
    const rows = await depositsOf(wallet.address);
    // Only the below-minimum transfer is recorded.
    expect(rows.map((r) => [r.status, r.reason, formatTon(BigInt(r.amount))])).toEqual([['unmatched', 'below_minimum', '0.09']]);
    expect(await live(alice.accountId)).toBe(0n);
    // The cursor still moved past every transaction.
    const cursor = await readCursor(h.service.db.kysely, wallet.address.toRawString());
    expect(cursor?.lt).toBe(fake.transactionsOf(wallet.address)[0]?.lt);
  });

  test('an aborted transfer (to the wallet before it is deployed, bounceable) is not credited', async () => {
    const { keyPairFromSeed } = await import('@ton/crypto');
    const { WalletContractV4 } = await import('@ton/ton');
    const undeployed = WalletContractV4.create({ workchain: 0, publicKey: keyPairFromSeed(Buffer.alloc(32, ++walletSeq)).publicKey }).address;
    const alice = await client();
    await transfer(fake, { to: undeployed, value: toNano('3'), text: alice.memo, bounce: true });
    const [tx] = fake.transactionsOf(undeployed);
    expect(tx?.description.type === 'generic' && tx.description.aborted).toBe(true);
    expect((await watcher(undeployed).pollOnce()).outcomes).toEqual([{ kind: 'ignored' }]);
    expect(await live(alice.accountId)).toBe(0n);
  });
});

describe('exactly once under paging, restarts and scale-out', () => {
  async function walletWithDeposits(count: number) {
    const wallet = await newWallet();
    const alice = await client();
    for (let i = 1; i <= count; i++) await transfer(fake, { to: wallet.address, value: toNano(String(i)), text: alice.memo });
    const expected = (BigInt(count) * BigInt(count + 1) * toNano('1')) / 2n;
    return { wallet, alice, expected };
  }

  test('small pages that overlap, and a duplicated page, credit each deposit once', async () => {
    const { wallet, alice, expected } = await walletWithDeposits(7);
    fake.fault({ kind: 'overlap', shift: 2 }, { api: 'getTransactions', times: 3 });
    const w = watcher(wallet.address, { pageSize: 2 });
    const result = await w.pollOnce();
    expect(result.outcomes.filter((o) => o.kind === 'credited')).toHaveLength(7);
    expect(await live(alice.accountId)).toBe(expected);
    // Pages of 2 (3 with the inclusive start row): the walk really paged back.
    expect(fake.callsTo('getTransactions').filter((r) => r.params.address === wallet.address.toString()).length).toBeGreaterThanOrEqual(4);

    // A duplicated page (the newest again instead of the next one): the walk refuses to guess, processes nothing, and the next poll finishes.
    const more = await walletWithDeposits(0);
    for (let i = 0; i < 5; i++) await transfer(fake, { to: more.wallet.address, value: toNano('1'), text: more.alice.memo });
    const w2 = watcher(more.wallet.address, { pageSize: 2, retry: { attempts: 1 } });
    fake.fault({ kind: 'duplicate_page' }, { api: 'getTransactions', times: 5 });
    const calls = fake.callsTo('getTransactions').length;
    await expect(w2.pollOnce()).rejects.toThrow(/do not move back/);
    expect(fake.callsTo('getTransactions').length).toBeGreaterThan(calls);
    expect(await live(more.alice.accountId)).toBe(0n);
    while ((await w2.pollOnce().catch(() => undefined)) === undefined);
    expect(await live(more.alice.accountId)).toBe(toNano('5'));
  });

  test('a watcher stopped mid-page and a new one started: each deposit once, and the cursor survives', async () => {
    const { wallet, alice, expected } = await walletWithDeposits(6);
    let credited = 0;
    const first = watcher(wallet.address, {
      pageSize: 4,
      onOutcome: (outcome) => {
        if (outcome.kind === 'credited' && ++credited === 2) void first.stop();
      },
    });
    await first.pollOnce();
    expect(credited).toBe(2);
    expect(await live(alice.accountId)).toBe(toNano('3'));
    const cursor = await readCursor(h.service.db.kysely, wallet.address.toRawString());
    const history = fake.transactionsOf(wallet.address);
    // funding, deploy, deposits 1 and 2 processed: the cursor is at deposit 2.
    expect(cursor?.lt).toBe(history[history.length - 4]?.lt);
    const restarted = watcher(wallet.address, { pageSize: 4 });
    const result = await restarted.pollOnce();
    expect(result.outcomes.map((o) => o.kind)).toEqual(['credited', 'credited', 'credited', 'credited']);
    expect(await live(alice.accountId)).toBe(expected);
  });

  test('two watchers polling at once never double credit', async () => {
    const { wallet, alice, expected } = await walletWithDeposits(8);
    const a = watcher(wallet.address, { pageSize: 3 });
    const b = watcher(wallet.address, { pageSize: 5 });
    const results = await Promise.all([a.pollOnce(), b.pollOnce(), a.pollOnce(), b.pollOnce()]);
    const credited = results.flatMap((r) => r.outcomes).filter((o) => o.kind === 'credited');
    expect(credited).toHaveLength(8);
    expect(await live(alice.accountId)).toBe(expected);
    expect((await depositsOf(wallet.address)).filter((d) => d.status === 'credited')).toHaveLength(8);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('the running loop credits new deposits as they arrive, rides out toncenter errors, and reports its lag', async () => {
    const wallet = await newWallet();
    const alice = await client();
    const w = watcher(wallet.address);
    w.start();
    try {
      await transfer(fake, { to: wallet.address, value: toNano('1.5'), text: alice.memo });
      await expect.poll(() => live(alice.accountId), { timeout: 5000, interval: 20 }).toBe(toNano('1.5'));
      // toncenter misbehaves: a 429, then 5xx answers that outlast one poll's retries; the
      // loop backs off and the deposit still arrives, once.
      fake.fault({ kind: 'status', status: 429, retryAfter: 0 }, { api: 'getTransactions' });
      fake.fault({ kind: 'status', status: 502 }, { api: 'getTransactions', times: 4 });
      const before = fake.callsTo('getTransactions').length;
      await transfer(fake, { to: wallet.address, value: toNano('2'), text: alice.memo });
      await expect.poll(() => live(alice.accountId), { timeout: 5000, interval: 20 }).toBe(toNano('3.5'));
      expect(
        fake
          .callsTo('getTransactions')
          .slice(before)
          .filter((r) => r.fault)
          .map((r) => r.fault),
      ).toEqual(['status', 'status', 'status', 'status', 'status']);
    } finally {
      await w.stop();
    }
    const status = await watcherStatus(h.service.db.kysely, wallet.address.toRawString());
    expect(status.lagSeconds).not.toBeNull();
    expect(status.lagSeconds as number).toBeLessThan(60);
    expect(status.lastCheckedAt as number).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('a backlog longer than one poll may page through', () => {
  // pageSize 3, maxPages 2: one poll reads at most 3 + 3 new rows (the second page repeats its start row).
  const small = { pageSize: 3, maxPages: 2 } as const;
  const raw = (address: Address) => address.toRawString();
  const requestsFor = (address: Address) => fake.callsTo('getTransactions').filter((r) => r.params.address === address.toString());

  /** Polls until a poll finds nothing new: no walk left, the cursor at the newest transaction. At most `max` polls. */
  async function pollUntilCaughtUp(w: DepositWatcher, address: Address, max: number, between?: (poll: number) => Promise<void>): Promise<number> {
    for (let poll = 1; poll <= max; poll++) {
      const result = await w.pollOnce();
      const cursor = await readCursor(h.service.db.kysely, raw(address));
      if (result.fetched === 0 && !(await readWalk(h.service.db.kysely, raw(address))) && cursor?.lt === fake.transactionsOf(address)[0]?.lt) return poll;
      await between?.(poll);
    }
    throw new Error(`not caught up after ${max} polls`);
  }

  /** Every deposit row of the wallet credited, each with one journal entry; the live balance is their sum. */
  async function expectEachCreditedOnce(address: Address, accountId: string, amounts: bigint[]) {
    const rows = await depositsOf(address);
    expect(rows.map((r) => r.status)).toEqual(amounts.map(() => 'credited'));
    expect(rows.map((r) => BigInt(r.amount)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual([...amounts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const journal = await h.service.db.kysely.selectFrom('journal').select('reason').where('account_id', '=', accountId).where('kind', '=', 'deposit').execute();
    expect(journal).toHaveLength(amounts.length);
    expect(new Set(journal.map((j) => j.reason)).size).toBe(amounts.length);
    expect(await live(accountId)).toBe(amounts.reduce((a, b) => a + b, 0n));
  }

  test('after downtime: more new transactions than maxPages × pageSize are credited over several polls, each once, while new ones arrive', async () => {
    const wallet = await newWallet();
    const alice = await client();
    const amounts: bigint[] = [];
    const deposit = async (nanotons: bigint) => {
      amounts.push(nanotons);
      await transfer(fake, { to: wallet.address, value: nanotons, text: alice.memo });
    };
    const w = watcher(wallet.address, small);
    await deposit(toNano('1'));
    await w.pollOnce();
    const before = await readCursor(h.service.db.kysely, raw(wallet.address));
    expect(before?.lt).toBe(fake.transactionsOf(wallet.address)[0]?.lt);
    // Downtime: 20 deposits (distinct amounts, so a skipped or doubled one shows in the sum).
    for (let i = 2; i <= 21; i++) await deposit(toNano(String(i)) + BigInt(i));
    const credits = new Map<string, number>();
    const w2 = watcher(wallet.address, { ...small, onOutcome: (o, tx) => o.kind === 'credited' && credits.set(tx.hash, (credits.get(tx.hash) ?? 0) + 1) });
    const first = await w2.pollOnce();
    // The newest 6 are processed at once, newest first; the cursor has not moved over the rest.
    expect(first.outcomes.map((o) => o.kind)).toEqual(Array(6).fill('credited'));
    expect((await readCursor(h.service.db.kysely, raw(wallet.address)))?.lt).toBe(before?.lt);
    const walk = await readWalk(h.service.db.kysely, raw(wallet.address));
    const history = fake.transactionsOf(wallet.address);
    expect(walk?.top.lt).toBe(history[0]?.lt);
    expect(walk?.resume.lt).toBe(history[5]?.lt);
    // Three more deposits arrive while the backlog is worked through, one after each poll.
    const polls = await pollUntilCaughtUp(w2, wallet.address, 30, async (poll) => {
      if (poll <= 3) await deposit(toNano('100') + BigInt(poll));
    });
    expect(polls).toBeGreaterThan(3);
    expect([...credits.values()].every((n) => n === 1)).toBe(true);
    expect(credits.size).toBe(23);
    await expectEachCreditedOnce(wallet.address, alice.accountId, amounts);
    expect(amounts).toHaveLength(24);
    // The cursor ends at the newest transaction, no walk left; polling again finds nothing.
    expect((await readCursor(h.service.db.kysely, raw(wallet.address)))?.lt).toBe(fake.transactionsOf(wallet.address)[0]?.lt);
    expect(await readWalk(h.service.db.kysely, raw(wallet.address))).toBeUndefined();
    expect((await w2.pollOnce()).outcomes).toEqual([]);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('a first start without a cursor walks a long history to its beginning; a restart mid-walk resumes and finishes', async () => {
    const wallet = await newWallet();
    const alice = await client();
    const amounts: bigint[] = [];
    for (let i = 1; i <= 15; i++) {
      amounts.push(toNano(String(i)) + 7n);
      await transfer(fake, { to: wallet.address, value: toNano(String(i)) + 7n, text: alice.memo });
    }
    // funding + deployment + 15 deposits = 17 transactions; the first watcher stops in the
    // middle of its second poll (the walk's first continuation).
    let seen = 0;
    const first = watcher(wallet.address, {
      ...small,
      onOutcome: () => {
        if (++seen === 8) void first.stop();
      },
    });
    await first.pollOnce();
    expect(seen).toBe(6);
    await first.pollOnce();
    expect(seen).toBe(8);
    const history = fake.transactionsOf(wallet.address);
    expect(await readCursor(h.service.db.kysely, raw(wallet.address))).toBeUndefined();
    const walk = await readWalk(h.service.db.kysely, raw(wallet.address));
    expect(walk?.top.lt).toBe(history[0]?.lt);
    expect(walk?.resume.lt).toBe(history[7]?.lt);
    expect(await live(alice.accountId)).toBe(amounts.slice(-8).reduce((a, b) => a + b, 0n));

    const restarted = watcher(wallet.address, small);
    const next = await restarted.pollOnce();
    // It goes on from where the first one stopped: no transaction processed twice.
    expect(next.outcomes.map((o) => o.kind)).toEqual(Array(6).fill('credited'));
    await pollUntilCaughtUp(restarted, wallet.address, 10);
    await expectEachCreditedOnce(wallet.address, alice.accountId, amounts);
    expect((await readCursor(h.service.db.kysely, raw(wallet.address)))?.lt).toBe(history[0]?.lt);
    expect(await readWalk(h.service.db.kysely, raw(wallet.address))).toBeUndefined();
    // Every page was asked with archival=true (history older than a regular liteserver keeps).
    expect(requestsFor(wallet.address).every((r) => r.params.archival === 'true')).toBe(true);
  });

  test('two watchers working through the same backlog credit each deposit once', async () => {
    const wallet = await newWallet();
    const alice = await client();
    const amounts: bigint[] = [];
    for (let i = 1; i <= 14; i++) {
      amounts.push(toNano(String(i)) + 3n);
      await transfer(fake, { to: wallet.address, value: toNano(String(i)) + 3n, text: alice.memo });
    }
    const a = watcher(wallet.address, small);
    const b = watcher(wallet.address, { pageSize: 2, maxPages: 3 });
    for (let round = 0; round < 20; round++) {
      await Promise.all([a.pollOnce(), b.pollOnce()]);
      const cursor = await readCursor(h.service.db.kysely, raw(wallet.address));
      if (cursor?.lt === fake.transactionsOf(wallet.address)[0]?.lt && !(await readWalk(h.service.db.kysely, raw(wallet.address)))) break;
    }
    await expectEachCreditedOnce(wallet.address, alice.accountId, amounts);
    expect((await readCursor(h.service.db.kysely, raw(wallet.address)))?.lt).toBe(fake.transactionsOf(wallet.address)[0]?.lt);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });

  test('a quiet wallet whose history a regular liteserver no longer keeps: pages are asked with archival=true', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await transfer(fake, { to: wallet.address, value: toNano('1'), text: alice.memo });
    const w = watcher(wallet.address, small);
    await w.pollOnce();
    for (let i = 2; i <= 8; i++) await transfer(fake, { to: wallet.address, value: toNano(String(i)), text: alice.memo });
    // Everything up to the cursor and the first two new deposits are "older than two days".
    fake.archivalBeforeLt = fake.transactionsOf(wallet.address)[4]?.lt;
    try {
      // The fake refuses a page with old rows unless archival=true (what the watcher must send).
      await expect(new ToncenterClient({ baseUrl: fake.url }).getTransactions(wallet.address.toString(), { limit: 10 })).rejects.toThrow(/lt not in db/);
      await pollUntilCaughtUp(w, wallet.address, 10);
    } finally {
      fake.archivalBeforeLt = undefined;
    }
    expect(await live(alice.accountId)).toBe(toNano('36'));
    expect((await readCursor(h.service.db.kysely, raw(wallet.address)))?.lt).toBe(fake.transactionsOf(wallet.address)[0]?.lt);
  });
});

describe('a published mainnet transaction served by the fake (V8, ton-org/ton-core)', () => {
  // ton-org/ton-core src/types/Transaction.spec.ts: an external-in order of wallet
  // EQCD39VS…xqB2N sending 10000 TON out (one internal out message).
  const V8 =
    'te6cckECCgEAAlMAA7V4Pf1VLmNym0cvy8yMRevMZpFwJVi2jsdSfhukA6DzGoAAAU1Ed9DUFmPJqTvOirSq2SKzYQ5GyQgvd9+38bqLQeGJ8YYrkwEwAAFNRGeacBYYzLegADRpVFhoAQIDAgHgBAUAgnKs+GZiNansGUYB+rKGLa25KuWgzm0WaeC5p+NLonoeFBg7+If0w+KZtCRH5Mx+9HCC8Pihk1IvrTPyRowEaTRLAg8MQMYZbXqEQAgJAd+IAQe/qqXMblNo5fl5kYi9eYzSLgSrFtHY6k/DdIB0HmNQB3H/g30bYqz72JAcnKJjRhgkmca92JLgIBGap3csfDt4Jk4S1186lCTQKuGZLHb97aw106oJRO8jslWF11AnUCFNTRi7DGZdIAAAAIAcBgEB3wcAdEIACasmTDZcDR+1HcxuZZBHXmDDvLMcX2Eijok8WCLyCyEwSMJzlQAAAAAAAAAAAAAAAAAAAAAAAAAAvUgBB7+qpcxuU2jl+XmRiL15jNIuBKsW0djqT8N0gHQeY1EABNWTJhsuBo/ajuY3MsgjrzBh3lmOL7CRR0SeLBF5BZCYJGE5yoAABhRYYAAAKaiO+hqEwxmW9AAAAABAAJ1BdkMTiAAAAAAAAAAAEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAG/Jh6EgTBRYQAAAAAAAAgAAAAAAA4SB9Dp1g8lBEAkVf+gygVyC7sUl7wdSG9SEX3iBd2MqQFAXjC98i7E=';
  const V8_ACCOUNT = 'EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N';
  const V8_HASH = 'e9fb666fd65e2d70479c5a2c2ec412ad08d68fcdf57676b3baa34aada3c95db8';

  test("the deposit wallet's own outgoing order (external-in, with an out message) is ignored: no deposit, no credit, the cursor moves past it", async () => {
    const { Address } = await import('@ton/core');
    const account = Address.parse(V8_ACCOUNT);
    const tx = fake.addRawTransaction(V8, account);
    expect(tx.outMessagesCount).toBe(1);
    // Served in toncenter's JSON, with the hash explorers show.
    const [row] = await new ToncenterClient({ baseUrl: fake.url }).getTransactions(V8_ACCOUNT, { limit: 10 });
    expect(Buffer.from(row?.transaction_id.hash ?? '', 'base64').toString('hex')).toBe(V8_HASH);
    expect(row?.out_msgs?.[0]).toMatchObject({ destination: 'EQATVkyYbLgaP2o7mNzLII68wYd5Zji-wkUdEniwReQWQlzi', value: '10000000000000' });

    const journalBefore = await h.service.db.kysely.selectFrom('journal').select('id').where('kind', '=', 'deposit').execute();
    const outcomes: string[] = [];
    const w = watcher(account, { onOutcome: (o, chainTx) => outcomes.push(`${o.kind} ${chainTx.hash}`) });
    expect((await w.pollOnce()).outcomes).toEqual([{ kind: 'ignored' }]);
    expect(outcomes).toEqual([`ignored ${V8_HASH}`]);
    expect(await depositsOf(account)).toEqual([]);
    expect(await h.service.db.kysely.selectFrom('journal').select('id').where('kind', '=', 'deposit').execute()).toHaveLength(journalBefore.length);
    const cursor = await readCursor(h.service.db.kysely, account.toRawString());
    expect(cursor).toMatchObject({ lt: 22901965000001n, hash: V8_HASH, chainTime: 1636617082000 });
    expect((await w.pollOnce()).outcomes).toEqual([]);
  });

  test('served in the history of another wallet (a broken answer), it is refused: not recorded, the cursor does not move past it', async () => {
    const wallet = await newWallet();
    const alice = await client();
    await transfer(fake, { to: wallet.address, value: toNano('2'), text: alice.memo });
    const w = watcher(wallet.address);
    await w.pollOnce();
    // V8's lt is far above the emulator's: it is the newest row of the wallet's list now.
    fake.addRawTransaction(V8, wallet.address);
    await transfer(fake, { to: wallet.address, value: toNano('3'), text: alice.memo });
    const ours = fake.transactionsOf(wallet.address)[1];
    // Oldest first: the real deposit before it is credited, then the poll stops at the foreign row, every time.
    await expect(w.pollOnce()).rejects.toThrow(/belongs to another account/);
    await expect(w.pollOnce()).rejects.toThrow(/belongs to another account/);
    expect((await readCursor(h.service.db.kysely, wallet.address.toRawString()))?.lt).toBe(ours?.lt);
    expect((await depositsOf(wallet.address)).map((d) => d.tx_hash)).not.toContain(V8_HASH);
    expect(await live(alice.accountId)).toBe(toNano('5'));
  });
});

describe('listing', () => {
  test('newest first, by account and status, with a cursor', async () => {
    const wallet = await newWallet();
    const alice = await client();
    for (const v of ['1', '2', '3']) await transfer(fake, { to: wallet.address, value: toNano(v), text: alice.memo });
    await watcher(wallet.address).pollOnce();
    const all = await listDeposits(h.service.db.kysely, { accountId: alice.accountId, limit: 10 });
    expect(all.map((d) => formatTon(d.amount))).toEqual(['3', '2', '1']);
    const after = await listDeposits(h.service.db.kysely, { accountId: alice.accountId, limit: 10, startingAfter: { lt: all[0]?.lt as bigint, id: all[0]?.id as string } });
    expect(after.map((d) => formatTon(d.amount))).toEqual(['2', '1']);
  });
});
