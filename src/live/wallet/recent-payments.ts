import type { Kysely } from 'kysely';
import type { Database, WalletMessageState } from '../../db/schema.js';

/**
 * The paying wallet's recent payments for the console's Live page: one row per order a signed
 * message paid (wallet_message_orders), newest message first, with the message's seqno, state
 * and transaction. What Fragment asked (live_payments) is not a payment until it is signed.
 */
export interface RecentPayment {
  orderId: string;
  /** Nanotons sent to Fragment for this order. */
  amount: bigint;
  destination: string;
  seqno: number;
  messageState: WalletMessageState;
  /** This order's outcome in the message: pending, paid, unpaid (the message expired unused), held. */
  outcome: 'pending' | 'paid' | 'unpaid' | 'held';
  txHash: string | null;
  wallet: string;
  signedAt: number;
}

export async function recentPayments(db: Kysely<Database>, limit = 50): Promise<RecentPayment[]> {
  const rows = await db
    .selectFrom('wallet_messages as m')
    .innerJoin('wallet_message_orders as l', 'l.message_hash', 'm.hash')
    .select(['l.order_id', 'l.amount', 'l.destination', 'l.outcome', 'm.seqno', 'm.state', 'm.tx_hash', 'm.wallet', 'm.created_at'])
    .orderBy('m.created_at', 'desc')
    .orderBy('m.seqno', 'desc')
    .orderBy('l.order_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    orderId: r.order_id,
    amount: BigInt(r.amount),
    destination: r.destination,
    seqno: Number(r.seqno),
    messageState: r.state,
    outcome: r.outcome,
    txHash: r.tx_hash,
    wallet: r.wallet,
    signedAt: Number(r.created_at),
  }));
}
