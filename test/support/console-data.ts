import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import { expect } from 'vitest';
import type { DepositsTable } from '../../src/db/tables/deposits.js';
import { storePayment } from '../../src/live/live-payments.js';
import { insertMessage } from '../../src/live/wallet/wallet-store.js';
import { transitionOrder } from '../../src/orders/transitions.js';
import type { Harness } from './harness.js';
import { seedLiveOrder } from './http.js';

/**
 * What the console's people work on, as the service leaves it: a live order held for review
 * (its wallet message gone from the chain) and a deposit the watcher could not match.
 */
const hex = () => randomBytes(32).toString('hex');
/** The paying wallet, stored in raw form as the service stores it (linked on tonviewer). */
const PAYING_WALLET = `0:${'5a'.repeat(32)}`;
let heldSeq = 0;
let depositSeq = 0;

/** A live order as the wallet leaves it when its message's seqno moved but the message is nowhere: processing, its message held. */
export async function heldOrder(h: Harness, accountId: string, state: 'held' | 'confirmed' = 'held', txHash: string | null = null) {
  const created = await seedLiveOrder(h, accountId, { idempotencyKey: `held-${process.pid}-${++heldSeq}`, product: 'stars', username: 'held_user', quantity: 50 });
  const order = created.order;
  const db = h.service.db.kysely;
  const now = Date.now();
  expect(await transitionOrder(db, order, { to: 'processing', nextRunAt: null, now })).toBe(true);
  const fragmentReqId = `req-${process.pid}-${heldSeq}`;
  await storePayment(db, {
    orderId: order.id,
    fragmentReqId,
    recipientName: 'Held User',
    quotedAmount: order.amount - 10_000_000n,
    destination: 'EQDfragmentdestination',
    amount: order.amount - 10_000_000n,
    payload: 'payload',
    validUntil: now + 600_000,
    createdAt: now,
  });
  const hash = hex();
  const seqno = 40 + heldSeq;
  await insertMessage(db, { hash, wallet: PAYING_WALLET, seqno, validUntil: now + 60_000, boc: 'boc', total: order.amount, now }, [
    { orderId: order.id, destination: 'EQDfragmentdestination', amount: order.amount - 10_000_000n, bodyHash: hex() },
  ]);
  await db.updateTable('wallet_messages').set({ state, tx_hash: txHash }).where('hash', '=', hash).execute();
  await db
    .updateTable('wallet_message_orders')
    .set({ outcome: state === 'held' ? 'held' : 'paid' })
    .where('message_hash', '=', hash)
    .execute();
  return { order, fragmentReqId, seqno, wallet: PAYING_WALLET };
}

/** A deposit as the watcher records one: unmatched with no comment unless `row` says otherwise; its id and transaction hash. */
export async function seedDeposit(h: Harness, row: Partial<Insertable<DepositsTable>> & { amount: bigint }): Promise<{ id: string; txHash: string }> {
  const now = Date.now();
  const id = `dep_console${process.pid}x${++depositSeq}`;
  const txHash = randomBytes(32).toString('hex');
  await h.service.db.kysely
    .insertInto('deposits')
    .values({
      id,
      tx_hash: txHash,
      lt: now * 1000 + depositSeq,
      address: 'deposit-wallet',
      sender: 'EQsender',
      comment: null,
      status: 'unmatched',
      reason: 'no_comment',
      account_id: null,
      chain_time: now,
      created_at: now,
      credited_at: null,
      credited_by: null,
      ...row,
    })
    .execute();
  return { id, txHash };
}

/** An unmatched TON (or USDT) deposit as the watcher records one; its id and transaction hash. */
export const unmatchedDeposit = (
  h: Harness,
  reason: 'no_comment' | 'memo_invalid' | 'memo_unknown' | 'below_minimum',
  nanotons: bigint,
  comment: string | null = null,
  usdtUnits?: bigint,
) =>
  seedDeposit(h, {
    amount: nanotons,
    comment,
    reason,
    ...(usdtUnits !== undefined && { asset: 'USDT' as const, jetton_amount: String(usdtUnits), jetton_wallet: 'our-usdt-wallet' }),
  });
