import { createAccount } from '../../src/accounts/accounts.js';
import { depositMemo } from '../../src/accounts/deposit-memo.js';
import { loadConfig } from '../../src/config.js';
import { parseDecimal } from '../../src/domain/decimal.js';
import type { Db } from '../../src/db/engine.js';
import { recordTransaction } from '../../src/deposits/store.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { fundTestBalance } from '../../src/ledger/test-funding.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { transitionOrder } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';

/**
 * A year of one account's activity for the statement suites, dated in the past: created on
 * 15 January 2025, then each month a TON deposit, a USDT deposit every other month, a Stars
 * order delivered, a Premium order failed, an operator credit or debit, and a Stars order
 * placed in the month's last second and delivered (or failed) in the next month's first, so
 * that every month boundary has an order reserved across it. The last one stays open: the
 * year ends with an amount reserved. The test balance gets test funds and a test order.
 */
export interface SeededYear {
  accountId: string;
  liveKey: string;
  testKey: string;
  createdAt: number;
  /** Per month of 2025 (0 = January): what was planned, for the suites to compare. */
  months: Array<{ tonDeposits: number; usdtDeposits: number; delivered: { stars: number; premium: number }; failed: number; placed: number; adjustments: number }>;
}

const config = loadConfig({});
const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));
const ADDRESS = 'EQDepositWalletForStatementsTests000000000000000000';
let lt = 1_000_000n;
let seeded = 0;

/** A new account, or (`accountId`: a dashboard user's) an existing one, its opening moved back to January 2025. */
export async function seedYear(db: Db, options: { accountId?: string } = {}): Promise<SeededYear> {
  const createdAt = Date.UTC(2025, 0, 15, 9);
  let created = { accountId: options.accountId ?? '', liveKey: '', testKey: '' };
  if (options.accountId) await db.kysely.updateTable('accounts').set({ created_at: createdAt }).where('id', '=', options.accountId).execute();
  else created = await createAccount(db, `statements-${++seeded}-${Date.now()}@example.com`, createdAt);
  const { accountId, liveKey, testKey } = created;
  const memo = await depositMemo(db, accountId, createdAt);
  const gate = new IdempotencyGate();
  const hashOf = () => (lt++).toString(16).padStart(64, 'a');
  const deposit = async (now: number, ton: bigint, usdt?: bigint) => {
    const hash = hashOf();
    const jetton = usdt
      ? { kind: 'USDT' as const, units: usdt, jettonWallet: 'EQJettonWallet', conversion: { rate: { rate: parseDecimal('2.5')!, at: now }, spreadPercent: parseDecimal('1')! } }
      : undefined;
    const outcome = await recordTransaction(
      db,
      {
        address: ADDRESS,
        position: { lt, hash, chainTime: now },
        deposit: { sender: 'EQSender', amount: ton, comment: memo, memo, reason: null, ...(jetton && { jetton }) },
      },
      now,
    );
    if (outcome.kind !== 'credited') throw new Error(`deposit not credited: ${outcome.kind}`);
  };
  let key = 0;
  const order = async (now: number, product: 'stars' | 'premium', quantity: number, mode: 'live' | 'test' = 'live'): Promise<Order> => {
    const deps = { db, prices, gate, liveAvailable: () => true, onCreated: () => undefined, now: () => now };
    const { order: created } = await createOrder(deps, { accountId, mode, idempotencyKey: `k${key++}`, product, username: 'alice_test', quantity, externalId: null });
    return created;
  };
  const finish = async (o: Order, to: 'delivered' | 'failed', now: number) => {
    await transitionOrder(db.kysely, o, { to: 'processing', nextRunAt: now, now });
    const final = to === 'delivered' ? { to, nextRunAt: null, now } : { to, failureReason: 'upstream_error' as const, message: 'refused', nextRunAt: null, now };
    await transitionOrder(db.kysely, { ...o, status: 'processing' }, final);
  };

  await fundTestBalance(db, { accountId, amount: 50_000_000_000n, reference: 'req_seed' }, createdAt + 1000);
  const testOrder = await order(createdAt + 2000, 'stars', 100, 'test');
  await finish(testOrder, 'delivered', createdAt + 3000);

  const months: SeededYear['months'] = [];
  let carried: Order | undefined;
  for (let m = 0; m < 12; m++) {
    const day = (d: number, h = 12) => Date.UTC(2025, m, d, h);
    const first = m === 0 ? 16 : 1;
    const plan = { tonDeposits: 1, usdtDeposits: m % 2, delivered: { stars: 1, premium: 0 }, failed: 1, placed: 3, adjustments: 1 };
    // The order placed in the last second of the month before settles in this month's first.
    if (carried) {
      const to = m % 3 === 0 ? 'failed' : 'delivered';
      await finish(carried, to, Date.UTC(2025, m, 1, 0, 0, 0, 500));
      if (to === 'failed') plan.failed++;
      else plan.delivered.stars++;
    }
    await deposit(day(first + 1), 20_000_000_000n + BigInt(m) * 1_234_567n);
    if (m % 2 === 1) await deposit(day(first + 2), 0n, 12_345_678n);
    const stars = await order(day(first + 3), 'stars', 50 + m * 10);
    await finish(stars, 'delivered', day(first + 3, 13));
    const premium = await order(day(first + 4), 'premium', 3);
    await finish(premium, 'failed', day(first + 5));
    const sign = m % 2 === 0 ? 1n : -1n;
    await adjustBalance(db, { accountId, mode: 'live', amount: sign * (1_000_000_007n + BigInt(m)), reason: m % 2 === 0 ? 'goodwill credit' : '=fee, "monthly"' }, day(first + 6));
    carried = await order(Date.UTC(2025, m + 1, 1) - 1000, 'stars', 77);
    months.push(plan);
  }
  return { accountId, liveKey, testKey, createdAt, months };
}
