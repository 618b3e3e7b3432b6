import { type Kysely, sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Database, WalletMessagesTable, WalletMessageState } from '../../db/schema.js';
import { appendEvent } from '../../orders/order-store.js';
import type { FoundTransaction } from './chain.js';
import { ordersHeld } from '../../notifications/notices.js';

/**
 * wallet_messages / wallet_message_orders (migration 0008-wallet) for both engines. A message
 * is written before it is broadcast; its links say which orders it pays and, once resolved,
 * whether each order's own out message is on chain.
 */
export interface StoredMessage {
  hash: string;
  wallet: string;
  seqno: number;
  /** Epoch ms. */
  validUntil: number;
  boc: string;
  state: WalletMessageState;
  total: bigint;
  txHash: string | null;
  broadcasts: number;
  lastBroadcastAt: number | null;
  createdAt: number;
}

type LinkOutcome = 'pending' | 'paid' | 'unpaid' | 'held';

export interface MessageLink {
  orderId: string;
  destination: string;
  amount: bigint;
  bodyHash: string;
  outcome: LinkOutcome;
}

const IN_FLIGHT: WalletMessageState[] = ['signed', 'broadcast'];

function messageFromRow(row: Selectable<WalletMessagesTable>): StoredMessage {
  return {
    hash: row.hash,
    wallet: row.wallet,
    seqno: Number(row.seqno),
    validUntil: Number(row.valid_until),
    boc: row.boc,
    state: row.state,
    total: BigInt(row.total),
    txHash: row.tx_hash,
    broadcasts: Number(row.broadcasts),
    lastBroadcastAt: row.last_broadcast_at === null ? null : Number(row.last_broadcast_at),
    createdAt: Number(row.created_at),
  };
}

/**
 * Takes the wallet's lock for the rest of `tx`: an UPDATE of its row is a row lock on
 * PostgreSQL (held to commit; other processes' senders queue behind it) and, on SQLite, the
 * transaction already holds the single writer lock (BEGIN IMMEDIATE).
 */
export async function lockWallet(tx: Kysely<Database>, wallet: string, now: number): Promise<void> {
  await tx
    .insertInto('wallet_state')
    .values({ address: wallet, locked_at: now })
    .onConflict((oc) => oc.column('address').doNothing())
    .execute();
  await tx.updateTable('wallet_state').set({ locked_at: now }).where('address', '=', wallet).execute();
}

export async function findMessage(db: Kysely<Database>, hash: string): Promise<StoredMessage | undefined> {
  const row = await db.selectFrom('wallet_messages').selectAll().where('hash', '=', hash).executeTakeFirst();
  return row ? messageFromRow(row) : undefined;
}

export async function inFlightMessages(db: Kysely<Database>, wallet: string): Promise<StoredMessage[]> {
  const rows = await db.selectFrom('wallet_messages').selectAll().where('wallet', '=', wallet).where('state', 'in', IN_FLIGHT).orderBy('seqno').execute();
  return rows.map(messageFromRow);
}

/** The highest seqno of a message that landed (or may have: held). */
export async function highestUsedSeqno(db: Kysely<Database>, wallet: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('wallet_messages')
    .select(sql<bigint | null>`max(seqno)`.as('seqno'))
    .where('wallet', '=', wallet)
    .where('state', 'in', ['confirmed', 'held'])
    .executeTakeFirst();
  return row?.seqno === null || row?.seqno === undefined ? undefined : Number(row.seqno);
}

/**
 * The order's most recent link: the message that pays it, or paid it, or proved it unpaid.
 * Only an `unpaid` latest link (or none) lets the order be signed for again.
 */
export async function latestLink(db: Kysely<Database>, orderId: string): Promise<{ link: MessageLink; message: StoredMessage } | undefined> {
  const row = await db
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .selectAll('m')
    .select(['l.order_id', 'l.destination', 'l.amount', 'l.body_hash', 'l.outcome'])
    .where('l.order_id', '=', orderId)
    .orderBy('m.created_at', 'desc')
    .orderBy('m.seqno', 'desc')
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    link: { orderId: row.order_id, destination: row.destination, amount: BigInt(row.amount), bodyHash: row.body_hash, outcome: row.outcome },
    message: messageFromRow(row),
  };
}

async function linksOf(db: Kysely<Database>, hash: string): Promise<MessageLink[]> {
  const rows = await db.selectFrom('wallet_message_orders').selectAll().where('message_hash', '=', hash).orderBy('order_id').execute();
  return rows.map((r) => ({ orderId: r.order_id, destination: r.destination, amount: BigInt(r.amount), bodyHash: r.body_hash, outcome: r.outcome }));
}

/** Live orders in processing whose stored payment request is not being paid (nor paid). */
export async function payableOrders(
  tx: Kysely<Database>,
  input: { validAfter: number; limit: number; exclude: string },
): Promise<{ orderId: string; reserved: bigint; destination: string; amount: bigint; payload: string; validUntil: number }[]> {
  if (input.limit <= 0) return [];
  const rows = await tx
    .selectFrom('live_payments as p')
    .innerJoin('orders as o', 'o.id', 'p.order_id')
    .select(['p.order_id', 'o.amount as reserved', 'p.destination', 'p.amount', 'p.payload', 'p.valid_until'])
    .where('o.status', '=', 'processing')
    .where('o.mode', '=', 'live')
    .where('p.order_id', '!=', input.exclude)
    .where('p.valid_until', '>', BigInt(input.validAfter))
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('wallet_message_orders as l').select('l.order_id').whereRef('l.order_id', '=', 'p.order_id').where('l.outcome', 'in', ['pending', 'paid', 'held'])),
      ),
    )
    .orderBy('p.created_at')
    .limit(input.limit)
    .execute();
  return rows.map((r) => ({
    orderId: r.order_id,
    reserved: BigInt(r.reserved),
    destination: r.destination,
    amount: BigInt(r.amount),
    payload: r.payload,
    validUntil: Number(r.valid_until),
  }));
}

/** Whether the order is linked to a message that pays, paid or may have paid it. */
export async function hasOpenLink(tx: Kysely<Database>, orderId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('wallet_message_orders')
    .select('order_id')
    .where('order_id', '=', orderId)
    .where('outcome', 'in', ['pending', 'paid', 'held'])
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertMessage(
  tx: Kysely<Database>,
  message: { hash: string; wallet: string; seqno: number; validUntil: number; boc: string; total: bigint; now: number },
  links: Omit<MessageLink, 'outcome'>[],
): Promise<void> {
  await tx
    .insertInto('wallet_messages')
    .values({
      hash: message.hash,
      wallet: message.wallet,
      seqno: message.seqno,
      valid_until: message.validUntil,
      boc: message.boc,
      state: 'signed',
      total: message.total,
      created_at: message.now,
      updated_at: message.now,
    })
    .execute();
  await tx
    .insertInto('wallet_message_orders')
    .values(
      links.map((l) => ({ message_hash: message.hash, order_id: l.orderId, destination: l.destination, amount: l.amount, body_hash: l.bodyHash, outcome: 'pending' as const })),
    )
    .execute();
}

export async function markBroadcast(db: Kysely<Database>, hash: string, now: number): Promise<void> {
  await db
    .updateTable('wallet_messages')
    .set({ state: sql`case when state = 'signed' then 'broadcast' else state end`, broadcasts: sql`broadcasts + 1`, last_broadcast_at: now, updated_at: now })
    .where('hash', '=', hash)
    .execute();
}

/**
 * Claims the next chain check of an in-flight message for this process: at most one process
 * asks toncenter about a message every `intervalMs`, however many of its orders are due.
 */
export async function claimCheck(db: Kysely<Database>, hash: string, now: number, intervalMs: number): Promise<boolean> {
  const result = await db
    .updateTable('wallet_messages')
    .set({ checked_at: now })
    .where('hash', '=', hash)
    .where('state', 'in', IN_FLIGHT)
    .where((eb) => eb.or([eb('checked_at', 'is', null), eb('checked_at', '<=', BigInt(now - intervalMs))]))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/**
 * The message is on chain: each order whose own out message (destination, value, body hash)
 * is in the transaction is paid (order.payment_sent with the transaction hash); the others are
 * provably unpaid by it (the seqno is spent). Wakes the message's orders. Returns the paid and
 * unpaid order ids, or undefined when another process resolved it first.
 */
export async function resolveConfirmed(
  db: Kysely<Database>,
  message: StoredMessage,
  found: FoundTransaction,
  now: number,
): Promise<{ paid: string[]; unpaid: string[] } | undefined> {
  return db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('wallet_messages')
      .set({ state: 'confirmed', tx_hash: found.hash, tx_lt: found.lt, resolved_at: now, updated_at: now })
      .where('hash', '=', message.hash)
      .where('state', 'in', IN_FLIGHT)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return undefined;
    const unused = [...found.outMessages];
    const paid: string[] = [];
    const unpaid: string[] = [];
    for (const link of await linksOf(tx, message.hash)) {
      const index = unused.findIndex((m) => m.destination === link.destination && m.value === link.amount && m.bodyHash === link.bodyHash);
      if (index >= 0) {
        unused.splice(index, 1);
        paid.push(link.orderId);
      } else unpaid.push(link.orderId);
    }
    await setOutcome(tx, message.hash, paid, 'paid');
    await setOutcome(tx, message.hash, unpaid, 'unpaid');
    for (const orderId of paid) {
      await appendEvent(tx, { orderId, type: 'order.payment_sent', status: 'processing', data: { tx_hash: found.hash }, now });
    }
    await wake(tx, [...paid, ...unpaid], now);
    return { paid, unpaid };
  });
}

/** The message can no longer land (expired: seqno unchanged) or may have landed unseen (held). */
export async function resolveUnconfirmed(db: Kysely<Database>, message: StoredMessage, state: 'expired' | 'held', now: number): Promise<string[] | undefined> {
  return db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('wallet_messages')
      .set({ state, resolved_at: now, updated_at: now })
      .where('hash', '=', message.hash)
      .where('state', 'in', IN_FLIGHT)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return undefined;
    const orders = (await linksOf(tx, message.hash)).map((l) => l.orderId);
    await setOutcome(tx, message.hash, orders, state === 'expired' ? 'unpaid' : 'held');
    // Expired orders are paid anew at once; held ones wait for the operator.
    if (state === 'expired') await wake(tx, orders, now);
    else if (orders.length > 0) {
      await tx.updateTable('orders').set({ next_run_at: null }).where('id', 'in', orders).where('status', '=', 'processing').execute();
      await ordersHeld(tx, orders, message.hash, now);
    }
    return orders;
  });
}

async function setOutcome(tx: Kysely<Database>, hash: string, orders: string[], outcome: LinkOutcome): Promise<void> {
  if (orders.length === 0) return;
  await tx.updateTable('wallet_message_orders').set({ outcome }).where('message_hash', '=', hash).where('order_id', 'in', orders).execute();
}

/** Makes orders due now (they finish or are paid anew on their next step). */
export async function wake(tx: Kysely<Database>, orders: string[], now: number): Promise<void> {
  if (orders.length === 0) return;
  await tx.updateTable('orders').set({ next_run_at: now }).where('id', 'in', orders).where('status', '=', 'processing').execute();
}

/**
 * Forgets an order's expired payment request so that the Fragment step asks for a new one —
 * only while nothing signed for it can still land (no pending, paid or held link).
 */
export async function dropPaymentRequest(tx: Kysely<Database>, orderId: string): Promise<boolean> {
  if (await hasOpenLink(tx, orderId)) return false;
  await tx.deleteFrom('live_payments').where('order_id', '=', orderId).execute();
  return true;
}
