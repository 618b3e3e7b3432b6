import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { StoredPayment } from './payment-sender.js';

/** live_payments rows ↔ StoredPayment, in one place for both engines (bigint columns). */
export async function findPayment(db: Kysely<Database>, orderId: string): Promise<StoredPayment | undefined> {
  const row = await db.selectFrom('live_payments').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  if (!row) return undefined;
  return {
    orderId: row.order_id,
    fragmentReqId: row.fragment_req_id,
    recipientName: row.recipient_name,
    quotedAmount: BigInt(row.quoted_amount),
    destination: row.destination,
    amount: BigInt(row.amount),
    payload: row.payload,
    validUntil: Number(row.valid_until),
    createdAt: Number(row.created_at),
  };
}

/**
 * Stores the payment request of an order unless one is stored already (a concurrent or
 * repeated step): the first stored request is the one that will be paid. Returns it.
 */
export async function storePayment(db: Kysely<Database>, payment: StoredPayment): Promise<StoredPayment> {
  await db
    .insertInto('live_payments')
    .values({
      order_id: payment.orderId,
      fragment_req_id: payment.fragmentReqId,
      recipient_name: payment.recipientName,
      quoted_amount: payment.quotedAmount,
      destination: payment.destination,
      amount: payment.amount,
      payload: payment.payload,
      valid_until: payment.validUntil,
      created_at: payment.createdAt,
      updated_at: payment.createdAt,
    })
    .onConflict((oc) => oc.column('order_id').doNothing())
    .execute();
  return (await findPayment(db, payment.orderId)) as StoredPayment;
}

/** The average amount the paying wallet was asked for per live order since `since` (nanotons), or undefined without any. */
export async function averagePayment(db: Kysely<Database>, since: number): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('live_payments')
    .select((eb) => [eb.fn.countAll<string | bigint>().as('n'), eb.fn.sum<string | bigint | null>('amount').as('total')])
    .where('created_at', '>=', BigInt(since))
    .executeTakeFirst();
  const n = BigInt(String(row?.n ?? 0));
  if (n === 0n || row?.total === null || row?.total === undefined) return undefined;
  return BigInt(String(row.total)) / n;
}
