import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../src/db/schema.js';
import { formatTon } from '../../../src/domain/money.js';
import { verifyLedger } from '../../../src/ledger/verify.js';

/**
 * The money invariants every reliability suite checks after its run, straight from the
 * database: `ledger verify` (journal sums = balances, no negative balance, reserved = sum of
 * open orders, each order's journal matches its status), plus what verify does not look at —
 * one order per idempotency key, one reserve per order and at most one debit or release,
 * exactly one created event and, for a final order, exactly one terminal event.
 */
export interface Acknowledged {
  id: string;
  accountId: string;
  idempotencyKey: string;
  amount: string;
}

const n = (value: unknown) => Number(String(value ?? 0));

export async function invariantProblems(db: Kysely<Database>, options: { final: boolean }): Promise<string[]> {
  const problems: string[] = (await verifyLedger(db)).map((v) => `ledger verify: ${v.invariant} ${v.message}`);
  // One snapshot for the per-order checks too, so they hold while the service keeps writing.
  problems.push(
    ...(await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((tx) => orderProblems(tx, options))),
  );
  return problems;
}

async function orderProblems(db: Kysely<Database>, options: { final: boolean }): Promise<string[]> {
  const problems: string[] = [];
  // Orders first: journal rows and events of orders created after this read are ignored below.
  const orders = await db.selectFrom('orders').select(['id', 'status']).execute();

  const duplicates = await db
    .selectFrom('orders')
    .select(['account_id', 'mode', 'idempotency_key', sql<unknown>`count(*)`.as('n')])
    .groupBy(['account_id', 'mode', 'idempotency_key'])
    .having(sql`count(*)`, '>', 1)
    .execute();
  for (const d of duplicates) problems.push(`${n(d.n)} orders for idempotency key ${d.idempotency_key} (${d.account_id}, ${d.mode})`);

  const journal = await db
    .selectFrom('journal')
    .select(['order_id', 'kind', sql<unknown>`count(*)`.as('n')])
    .where('order_id', 'is not', null)
    .groupBy(['order_id', 'kind'])
    .execute();
  const perOrder = new Map<string, Record<string, number>>();
  for (const row of journal) {
    const kinds = perOrder.get(row.order_id as string) ?? {};
    kinds[row.kind] = n(row.n);
    perOrder.set(row.order_id as string, kinds);
  }
  const events = await db
    .selectFrom('order_events')
    .select(['order_id', 'type', sql<unknown>`count(*)`.as('n')])
    .groupBy(['order_id', 'type'])
    .execute();
  const eventsPerOrder = new Map<string, Record<string, number>>();
  for (const row of events) {
    const types = eventsPerOrder.get(row.order_id) ?? {};
    types[row.type] = n(row.n);
    eventsPerOrder.set(row.order_id, types);
  }
  for (const order of orders) {
    const kinds = perOrder.get(order.id) ?? {};
    const types = eventsPerOrder.get(order.id) ?? {};
    if ((kinds.reserve ?? 0) !== 1) problems.push(`order ${order.id}: ${kinds.reserve ?? 0} reserve journal rows`);
    if ((kinds.debit ?? 0) + (kinds.release ?? 0) > 1) problems.push(`order ${order.id}: debited ${kinds.debit ?? 0}× and released ${kinds.release ?? 0}× (double debit)`);
    if ((types['order.created'] ?? 0) !== 1) problems.push(`order ${order.id}: ${types['order.created'] ?? 0} order.created events`);
    const terminal = (types['order.delivered'] ?? 0) + (types['order.failed'] ?? 0);
    const isFinal = order.status === 'delivered' || order.status === 'failed';
    if (isFinal ? terminal !== 1 : terminal !== 0) problems.push(`order ${order.id} (${order.status}): ${terminal} terminal events`);
    if (options.final && !isFinal) problems.push(`order ${order.id} is still ${order.status}`);
  }
  return problems;
}

/** Every acknowledged (201) order exists with the account and amount the client was told. */
export async function acknowledgedProblems(db: Kysely<Database>, acknowledged: Acknowledged[]): Promise<string[]> {
  const problems: string[] = [];
  const byKey = new Map<string, string>();
  for (const ack of acknowledged) {
    const k = `${ack.accountId}\u0000${ack.idempotencyKey}`;
    const seen = byKey.get(k);
    if (seen !== undefined && seen !== ack.id) problems.push(`idempotency key ${ack.idempotencyKey} answered with two orders: ${seen} and ${ack.id}`);
    byKey.set(k, ack.id);
  }
  const ids = [...new Set(acknowledged.map((a) => a.id))];
  const rows = new Map<string, { account_id: string; amount: unknown; idempotency_key: string }>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    for (const row of await db.selectFrom('orders').select(['id', 'account_id', 'amount', 'idempotency_key']).where('id', 'in', chunk).execute()) rows.set(row.id, row);
  }
  for (const ack of acknowledged) {
    const row = rows.get(ack.id);
    if (!row) problems.push(`order ${ack.id} was acknowledged with 201 but does not exist`);
    else if (row.account_id !== ack.accountId || row.idempotency_key !== ack.idempotencyKey)
      problems.push(`order ${ack.id} belongs to ${row.account_id}/${row.idempotency_key}, acknowledged to ${ack.accountId}/${ack.idempotencyKey}`);
    else if (formatTon(BigInt(String(row.amount))) !== ack.amount)
      problems.push(`order ${ack.id} holds ${formatTon(BigInt(String(row.amount)))} TON, acknowledged as ${ack.amount}`);
  }
  return problems;
}
