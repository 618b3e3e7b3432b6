import { toNano } from '@ton/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkCharacter, depositMemo } from '../../src/accounts/deposit-memo.js';
import { listAudit } from '../../src/audit/audit.js';
import type { Db } from '../../src/db/engine.js';
import { unmatchedCount } from '../../src/deposits/store.js';
import { DepositWatcher } from '../../src/deposits/watcher.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createLogger } from '../../src/logger.js';
import { ToncenterClient } from '../../src/ton/toncenter.js';
import { freshDatabase, type FreshDatabase } from '../support/database.js';
import { deployWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { allowSlowProcesses, type Cli, fails, ok, openFresh, operatorCli, seedAccount } from '../operator/helpers.js';

/**
 * `starport deposit list`, `deposit assign` and `deposit return`: the real bin/starport (run `npm run build`
 * first) on a database the watcher filled from the fake toncenter.
 */
allowSlowProcesses();

let fresh: FreshDatabase;
let db: Db;
let fake: FakeToncenter;
let cli: Cli;
let alice: { accountId: string };
let bob: { accountId: string };
const hashes: Record<string, string> = {};

beforeAll(async () => {
  [fresh, fake] = await Promise.all([freshDatabase(), FakeToncenter.start()]);
  db = await openFresh(fresh);
  cli = operatorCli(fresh);
  alice = { accountId: (await seedAccount(db)).account_id };
  bob = { accountId: (await seedAccount(db)).account_id };
  const memo = await depositMemo(db, alice.accountId);
  const wallet = await deployWallet(fake, 'cli suite wallet');
  const typo = memo.slice(0, 3) + (memo[3] === 'A' ? 'B' : 'A') + memo.slice(4);
  await transfer(fake, { to: wallet.address, value: toNano('1.25'), text: memo });
  await transfer(fake, { to: wallet.address, value: toNano('7.5'), text: typo });
  await transfer(fake, { to: wallet.address, value: toNano('0.05'), text: memo });
  await transfer(fake, { to: wallet.address, value: toNano('2'), text: `ABCDEFGHJK${checkCharacter('ABCDEFGHJK')}` });
  const watcher = new DepositWatcher({
    db,
    logger: createLogger('silent'),
    client: new ToncenterClient({ baseUrl: fake.url }),
    address: wallet.address.toString(),
    minAmount: toNano('0.1'),
    pollMs: 1000,
  });
  await watcher.pollOnce();
  const rows = await db.kysely.selectFrom('deposits').select(['tx_hash', 'reason']).execute();
  for (const row of rows) hashes[row.reason ?? 'credited'] = row.tx_hash;
});
afterAll(async () => {
  await db?.close();
  await Promise.all([fresh?.dispose(), fake?.close()]);
});

const liveOf = async (accountId: string) => (await readBalance(db.kysely, { accountId, mode: 'live' }))?.available;

describe('deposit list', () => {
  test('all deposits, or only the unmatched ones with their reasons', async () => {
    const all = await ok(cli, ['deposit', 'list', '--json']);
    expect(all.deposits.map((d: { amount: { value: string } }) => d.amount.value)).toEqual(['2', '0.05', '7.5', '1.25']);
    expect(all.deposits[3]).toMatchObject({ status: 'credited', account_id: alice.accountId, credited_by: 'watcher', tx_hash: hashes.credited });
    const unmatched = await ok(cli, ['deposit', 'list', '--unmatched', '--json']);
    expect(unmatched.deposits.map((d: { reason: string }) => d.reason)).toEqual(['memo_unknown', 'below_minimum', 'memo_invalid']);
    expect(unmatched.deposits.every((d: { account_id: string | null }) => d.account_id === null)).toBe(true);
    const text = await ok(cli, ['deposit', 'list', '--unmatched']);
    expect(text.stdout).toContain(hashes.memo_invalid);
    expect(text.stdout).toContain('unmatched (memo_invalid)');
  });
});

describe('deposit assign', () => {
  test('credits an unmatched deposit once, audited; refuses repeats, unknown hashes and accounts', async () => {
    const tx = hashes.memo_invalid as string;
    // Two operators at once: exactly one credit.
    const [first, second] = await Promise.all([
      cli(['deposit', 'assign', '--tx', tx, '--account', alice.accountId, '--reason', 'typo in memo, ticket 12', '--json']),
      cli(['deposit', 'assign', '--tx', tx.toUpperCase(), '--account', bob.accountId, '--json']),
    ]);
    expect([first.code, second.code].sort()).toEqual([0, 1]);
    const winner = first.code === 0 ? alice : bob;
    const loser = first.code === 0 ? second : first;
    expect(loser.stderr).toMatch(/already credited|credited or returned meanwhile/);
    expect(await liveOf(winner.accountId)).toBe(winner === alice ? toNano('8.75') : toNano('7.5'));
    const audit = await listAudit(db.kysely, { action: 'deposit.assign', limit: 10 });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'test-operator',
      accountId: winner.accountId,
      mode: 'live',
      details: { tx_hash: tx, amount: '7.5', unmatched_reason: 'memo_invalid' },
    });

    await fails(cli, ['deposit', 'assign', '--tx', tx, '--account', alice.accountId], /already credited/);
    await fails(cli, ['deposit', 'assign', '--tx', '0'.repeat(64), '--account', alice.accountId], /no deposit/);
    await fails(cli, ['deposit', 'assign', '--tx', 'nothex', '--account', alice.accountId], /transaction hash/);
    await fails(cli, ['deposit', 'assign', '--tx', hashes.below_minimum as string, '--account', 'acct_nobody'], /no account/);
    await fails(cli, ['deposit', 'assign', '--account', alice.accountId], /--tx is required/);
    // A refused assign wrote nothing.
    expect(
      (
        await db.kysely
          .selectFrom('deposits')
          .select('status')
          .where('tx_hash', '=', hashes.below_minimum as string)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('unmatched');
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });
});

describe('deposit return', () => {
  test('records an unmatched deposit as sent back by hand, once, audited; it leaves the unmatched ones; nothing is credited', async () => {
    const tx = hashes.memo_unknown as string;
    const balances = [await liveOf(alice.accountId), await liveOf(bob.accountId)];
    const waiting = await unmatchedCount(db.kysely);
    // Two operators at once: exactly one records it.
    const [first, second] = await Promise.all([
      cli(['deposit', 'return', '--tx', tx, '--reason', 'sent back, ticket 31', '--json']),
      cli(['deposit', 'return', '--tx', Buffer.from(tx, 'hex').toString('base64'), '--json']),
    ]);
    expect([first.code, second.code].sort()).toEqual([0, 1]);
    const [winner, loser] = first.code === 0 ? [first, second] : [second, first];
    expect(loser.stderr).toMatch(/already returned|returned meanwhile/);
    const { deposit } = JSON.parse(winner.stdout);
    expect(deposit).toMatchObject({ tx_hash: tx, status: 'returned', reason: 'memo_unknown', account_id: null, credited_at: null, amount: { value: '2', currency: 'TON' } });
    expect(Date.parse(deposit.returned_at)).toBeGreaterThan(Date.now() - 120_000);
    const audit = await listAudit(db.kysely, { action: 'deposit.return', limit: 10 });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'test-operator', mode: 'live', details: { tx_hash: tx, amount: '2', unmatched_reason: 'memo_unknown' } });
    expect([await liveOf(alice.accountId), await liveOf(bob.accountId)]).toEqual(balances);
    // No longer waiting: not in the unmatched count (the metric and /readyz) nor in list --unmatched.
    expect(await unmatchedCount(db.kysely)).toBe(waiting - 1);
    const unmatched = await ok(cli, ['deposit', 'list', '--unmatched', '--json']);
    expect(unmatched.deposits.map((d: { tx_hash: string }) => d.tx_hash)).not.toContain(tx);
    const all = await ok(cli, ['deposit', 'list', '--json']);
    expect(all.deposits.find((d: { tx_hash: string }) => d.tx_hash === tx)).toMatchObject({ status: 'returned' });
    expect((await ok(cli, ['deposit', 'list'])).stdout).toMatch(new RegExp(`${tx}\\s+returned \\(memo_unknown\\)`));

    // Settled deposits are refused, either way; a refused return writes nothing.
    await fails(cli, ['deposit', 'return', '--tx', tx], /already returned/);
    await fails(cli, ['deposit', 'assign', '--tx', tx, '--account', alice.accountId], /already returned/);
    await fails(cli, ['deposit', 'return', '--tx', hashes.credited as string], /already credited/);
    await fails(cli, ['deposit', 'return', '--tx', 'f'.repeat(64), '--json'], /no deposit/);
    await fails(cli, ['deposit', 'return', '--tx', 'nothex'], /transaction hash/);
    await fails(cli, ['deposit', 'return'], /--tx is required/);
    expect(await listAudit(db.kysely, { action: 'deposit.return', limit: 10 })).toHaveLength(1);
    expect(
      (
        await db.kysely
          .selectFrom('deposits')
          .select('status')
          .where('tx_hash', '=', hashes.credited as string)
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('credited');
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });

  test('--help says that it sends nothing on chain', async () => {
    const help = await ok(cli, ['deposit', 'return', '--help']);
    expect(help.stdout).toMatch(/sends nothing on\s+chain/);
    expect(help.stdout).toContain('usage: starport deposit return --tx HASH [--reason TEXT]');
    expect((await ok(cli, ['--help'])).stdout).toMatch(/deposit return\s+Record that an unmatched deposit was sent back by hand/);
  });
});
