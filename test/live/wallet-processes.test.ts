import { randomUUID } from 'node:crypto';
import { mnemonicNew } from '@ton/crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { findPayment } from '../../src/live/live-payments.js';
import type { SigningWallet } from '../../src/live/wallet/signing-wallet.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { FAKE_SESSION, FakeFragment } from '../support/fragment/fake-fragment.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { chainPayments, fundedWallet } from './wallet-support.js';

/**
 * The paying wallet across real `bin/starport serve` processes (dist/: `npm run build` first)
 * on one database: a process killed with SIGKILL after the write-ahead commit, or right after
 * the broadcast, is followed by another that finishes the payment without paying twice; two
 * worker processes paying at once never sign two messages with the same seqno.
 */
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

let database: FreshDatabase;
let db: Db;
let fragment: FakeFragment;
let ton: FakeToncenter;
let wallet: SigningWallet;
let env: Record<string, string>;
let liveKey: string;
const seen = new Set<string>();
const running: ServeProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  [fragment, ton] = await Promise.all([FakeFragment.start({ anyoneExists: true }), FakeToncenter.start()]);
  const mnemonic = (await mnemonicNew()).join(' ');
  wallet = await fundedWallet(ton, mnemonic);
  env = {
    ...database.env,
    FRAGMENT_BASE_URL: fragment.url,
    FRAGMENT_COOKIES: FAKE_SESSION,
    FRAGMENT_MAX_RPS: '1000',
    WALLET_MNEMONIC: mnemonic,
    TON_API_URL: ton.url,
    WALLET_POLL_MS: '100',
    WALLET_REBROADCAST_SECONDS: '1',
    WORKER_LEASE_MS: '1500',
    RATE_LIMIT_RPS: '0',
  };
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  const account = await createAccount(db, `wallet-${randomUUID()}@example.com`);
  await adjustBalance(db, { accountId: account.accountId, mode: 'live', amount: parseTon('100'), reason: 'test funding' });
  liveKey = account.liveKey;
});
afterAll(async () => {
  for (const node of running) await node.stop('SIGKILL').catch(() => undefined);
  await db?.close();
  await Promise.all([fragment?.close(), ton?.close()]);
  await database?.dispose();
});

async function serve(): Promise<ServeProcess> {
  const node = await startServe(env, 30_000);
  running.push(node);
  return node;
}

async function postLive(node: ServeProcess, recipient: string): Promise<string> {
  const res = await fetch(`${node.url}/api/v1/orders`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${liveKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: JSON.stringify({ product: 'stars', recipient, quantity: 50 }),
  });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

const messagesOf = (orderId: string) =>
  db.kysely
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .select(['m.hash', 'm.seqno', 'm.state', 'm.broadcasts', 'l.outcome'])
    .where('l.order_id', '=', orderId)
    .execute();

const statusOf = async (orderId: string) => (await db.kysely.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow()).status;

async function paymentsOf(orderId: string): Promise<number> {
  chainPayments(ton, fragment, wallet.address, seen);
  const payment = await findPayment(db.kysely, orderId);
  const ref = fragment.invoices.get(payment?.fragmentReqId ?? '')?.ref ?? '';
  return fragment.paymentsByRef.get(ref) ?? 0;
}

describe('crash and resume', () => {
  test('killed after the write-ahead commit (broadcast never answered): the next process sends the same message, paid once', async () => {
    ton.fault({ kind: 'hang' }, { api: 'sendBoc', times: 1 });
    const first = await serve();
    const id = await postLive(first, 'crash_signed');
    const [stored] = await pollUntil(
      () => messagesOf(id),
      (m) => m.length === 1,
      { what: 'the stored message' },
    );
    await first.stop('SIGKILL');
    expect(stored?.state).toBe('signed');
    expect(await paymentsOf(id)).toBe(0);

    const second = await serve();
    await pollUntil(
      () => statusOf(id),
      (s) => s === 'delivered',
      { what: 'delivery after the restart', timeoutMs: 30_000 },
    );
    const messages = await messagesOf(id);
    expect(messages.map((m) => [m.hash, m.state, m.outcome])).toEqual([[stored?.hash, 'confirmed', 'paid']]);
    expect(await paymentsOf(id)).toBe(1);
    await second.stop('SIGKILL');
  });

  test('killed right after the broadcast (the message lands while no process runs): resumed, confirmed, paid once', async () => {
    ton.blockMs = 1500;
    const first = await serve();
    const id = await postLive(first, 'crash_broadcast');
    await pollUntil(
      () => messagesOf(id),
      (m) => m[0]?.state === 'broadcast',
      { what: 'the broadcast', intervalMs: 10 },
    );
    await first.stop('SIGKILL');
    await pollUntil(
      () => paymentsOf(id),
      (n) => n === 1,
      { what: 'the message to land', timeoutMs: 10_000 },
    );
    ton.blockMs = 0;
    expect(await statusOf(id)).toBe('processing');

    const second = await serve();
    await pollUntil(
      () => statusOf(id),
      (s) => s === 'delivered',
      { what: 'delivery after the restart', timeoutMs: 30_000 },
    );
    expect((await messagesOf(id)).map((m) => [m.state, m.outcome])).toEqual([['confirmed', 'paid']]);
    expect(await paymentsOf(id)).toBe(1);
    await second.stop('SIGKILL');
  });
});

describe('two worker processes, one wallet', () => {
  test('40 orders paid by two processes: never two messages in flight (sampled throughout), distinct seqnos, each order paid once', async () => {
    ton.blockMs = 200;
    const [a, b] = await Promise.all([serve(), serve()]);
    // Sample wallet_messages while the processes run: each sample is one SELECT (one snapshot)
    // of the messages in flight; no sample may show two for the same wallet.
    const sampled = { samples: 0, withInFlight: 0, inFlight: new Set<string>(), violations: [] as string[] };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await db.kysely.selectFrom('wallet_messages').select(['wallet', 'hash', 'seqno', 'state']).where('state', 'in', ['signed', 'broadcast']).execute();
        sampled.samples++;
        if (rows.length > 0) sampled.withInFlight++;
        for (const row of rows) sampled.inFlight.add(row.hash);
        const wallets = rows.map((r) => r.wallet);
        if (new Set(wallets).size !== wallets.length) sampled.violations.push(JSON.stringify(rows.map((r) => [r.wallet.slice(0, 10), String(r.seqno), r.state])));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    let ids: string[];
    try {
      ids = await Promise.all(Array.from({ length: 40 }, (_, i) => postLive(i % 2 ? a : b, `pair_${i}`)));
      await pollUntil(
        async () => (await Promise.all(ids.map(statusOf))).filter((s) => s === 'delivered').length,
        (n) => n === ids.length,
        { what: 'all 40 delivered', timeoutMs: 60_000, intervalMs: 200 },
      );
    } finally {
      sampling = false;
      await sampler;
    }
    expect(sampled.violations, 'samples with two messages in flight for one wallet').toEqual([]);
    expect(sampled.samples, 'the sampler kept sampling').toBeGreaterThan(20);
    expect(sampled.withInFlight, 'samples that caught a message in flight').toBeGreaterThan(0);
    // Every signed message, whatever became of it (expired ones included). In this run nothing
    // can expire (WALLET_MESSAGE_TTL_SECONDS 180, no broadcast fails), so a repeated seqno would
    // be two messages that could both land. (After a real expiry the seqno is reused by design:
    // wallet.test.ts.)
    const messages = await db.kysely.selectFrom('wallet_messages').select(['seqno', 'state']).where('wallet', '=', wallet.address.toRawString()).execute();
    expect(
      messages.filter((m) => m.state !== 'confirmed'),
      'every message confirmed',
    ).toEqual([]);
    expect(new Set(messages.map((m) => String(m.seqno))).size, 'no seqno signed twice').toBe(messages.length);
    expect(sampled.inFlight.size, 'the messages caught in flight are among them').toBeLessThanOrEqual(messages.length);
    for (const id of ids) expect(await paymentsOf(id)).toBe(1);
    expect(await verifyLedger(db.kysely)).toEqual([]);
    await Promise.all([a.stop('SIGKILL'), b.stop('SIGKILL')]);
  });
});

describe('the database backs the invariant', () => {
  test('a second message in flight for the same wallet is refused (partial unique index), for another wallet or once resolved it is not', async () => {
    const row = (hash: string, walletAddress: string, state: 'signed' | 'broadcast' | 'expired') => ({
      hash,
      wallet: walletAddress,
      seqno: 999_999,
      valid_until: Date.now(),
      boc: 'te6cc',
      state,
      total: 1n,
      created_at: Date.now(),
      updated_at: Date.now(),
    });
    const other = `0:${'ee'.repeat(32)}`;
    const hashes = ['a1', 'a2', 'a3', 'a4'].map((p) => p.repeat(32));
    try {
      await db.kysely
        .insertInto('wallet_messages')
        .values(row(hashes[0] as string, other, 'signed'))
        .execute();
      await expect(
        db.kysely
          .insertInto('wallet_messages')
          .values(row(hashes[1] as string, other, 'broadcast'))
          .execute(),
      ).rejects.toThrow(/unique/i);
      // Resolved messages do not count, nor do other wallets' messages.
      await db.kysely
        .insertInto('wallet_messages')
        .values(row(hashes[2] as string, other, 'expired'))
        .execute();
      await db.kysely
        .insertInto('wallet_messages')
        .values(row(hashes[3] as string, `0:${'dd'.repeat(32)}`, 'signed'))
        .execute();
    } finally {
      await db.kysely.deleteFrom('wallet_messages').where('hash', 'in', hashes).execute();
    }
  });
});
