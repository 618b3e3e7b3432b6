import { toNano } from '@ton/core';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { deployWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { deployJetton, fund, metadata, sendJetton } from '../support/ton/jetton.js';

/**
 * kill -9 while the service (bin/starport serve, built dist/) works through a backlog of mixed
 * TON and USDT deposits, then a new process on the same database: every deposit credited once.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let database: FreshDatabase;
let db: Db;
let fake: FakeToncenter;
const processes: ServeProcess[] = [];

beforeAll(async () => {
  [database, fake] = await Promise.all([freshDatabase(), FakeToncenter.start()]);
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await db?.close();
  await fake?.close();
  await database?.dispose();
});

test('a backlog of 30 TON and 30 USDT deposits, the worker killed -9 mid-way and another started: each credited once', async () => {
  const usdt = await deployJetton(fake, 'crash suite tether', metadata('https://tether.to/usdt-ton.json'));
  const wallet = await deployWallet(fake, 'crash suite deposit wallet');
  const { accountId } = await createAccount(db, `usdt-crash-${Date.now()}@example.com`);
  const memo = await depositMemo(db, accountId);
  await fund(fake, usdt, 'crash suite client', 10_000_000_000n);
  let expected = 0n;
  for (let i = 1; i <= 30; i++) {
    await transfer(fake, { to: wallet.address, value: toNano('1') + BigInt(i), text: memo });
    await sendJetton(fake, usdt, { client: 'crash suite client', to: wallet.address, amount: BigInt(i) * 1_000_000n, text: memo });
    // i USDT at 2 USD/TON less 1 %: i × 0.495 TON.
    expected += toNano('1') + BigInt(i) + BigInt(i) * 495_000_000n;
  }
  const env = { ...database.env, DEPOSIT_ADDRESS: wallet.address.toString(), TON_API_URL: fake.url, DEPOSIT_POLL_MS: '50', USDT_MASTER: usdt.master.toString(), TON_USD_RATE: '2' };
  const credited = () => db.kysely.selectFrom('deposits').select('id').where('status', '=', 'credited').where('address', '=', wallet.address.toRawString()).execute();

  const first = await startServe(env, 20_000, ['--role', 'worker']);
  processes.push(first);
  await pollUntil(credited, (rows) => rows.length >= 1, { timeoutMs: 30_000, intervalMs: 1, what: 'the first credit' });
  await first.stop('SIGKILL');
  const atKill = (await credited()).length;
  console.log(`usdt-crash: ${atKill} of 60 deposits credited when the worker was killed`);

  const second = await startServe(env, 20_000, ['--role', 'worker']);
  processes.push(second);
  await pollUntil(credited, (rows) => rows.length === 60, { timeoutMs: 60_000, what: 'all 60 deposits credited' });
  // Let it poll past the end a few more times: still 60.
  const polls = fake.callsTo('getTransactions').length;
  await pollUntil(
    async () => fake.callsTo('getTransactions').length,
    (n) => n > polls + 3,
    { what: 'more polls' },
  );
  const rows = await db.kysely.selectFrom('deposits').select(['asset', 'status']).where('address', '=', wallet.address.toRawString()).execute();
  expect(rows.filter((r) => r.asset === 'TON' && r.status === 'credited')).toHaveLength(30);
  expect(rows.filter((r) => r.asset === 'USDT' && r.status === 'credited')).toHaveLength(30);
  const journal = await db.kysely.selectFrom('journal').select('reason').where('account_id', '=', accountId).where('kind', '=', 'deposit').execute();
  expect(journal).toHaveLength(60);
  expect(new Set(journal.map((j) => j.reason)).size).toBe(60);
  expect((await readBalance(db.kysely, { accountId, mode: 'live' }))?.available).toBe(expected);
  expect(await verifyLedger(db.kysely)).toEqual([]);
});
