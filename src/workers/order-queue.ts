import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { Engine } from '../db/engine.js';
import type { Database } from '../db/schema.js';
import { type Order, orderFromRow } from '../orders/order.js';

/**
 * The orders table as the queue (docs/architecture.md "Orders as the queue"): which orders are
 * due, claiming them under a worker's lease, extending and giving back leases, and when the next
 * one falls due. The worker (fulfilment-worker.ts) decides when to call these; every query on
 * the queue's columns (`next_run_at`, `lease_owner`, `lease_until`) is here.
 */

/** Orders due now and under no live lease, oldest due first, locked for this claim. */
export function dueOrders(db: Kysely<Database>, engine: Engine, modes: Mode[], now: number, limit: number) {
  return engine.lockForClaim(
    db
      .selectFrom('orders')
      .selectAll()
      .where('next_run_at', '<=', BigInt(now))
      .where('mode', 'in', modes)
      .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', BigInt(now))]))
      .orderBy('next_run_at')
      .limit(limit),
  );
}

/** Claims up to `limit` due orders of `modes` for worker `owner` until `now + leaseMs`, in one statement. */
export async function claimDue(db: Kysely<Database>, engine: Engine, claim: { owner: string; modes: Mode[]; now: number; leaseMs: number; limit: number }): Promise<Order[]> {
  const { owner, modes, now, leaseMs, limit } = claim;
  const rows = await db
    .updateTable('orders')
    .set({ lease_owner: owner, lease_until: now + leaseMs })
    .where('id', 'in', (eb) =>
      engine.lockForClaim(
        eb
          .selectFrom('orders')
          .select('id')
          .where('next_run_at', '<=', BigInt(now))
          .where('mode', 'in', modes)
          .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', BigInt(now))]))
          .orderBy('next_run_at')
          .limit(limit),
      ),
    )
    .returningAll()
    .execute();
  return rows.map(orderFromRow);
}

/** Clears the leases of worker `owner`: of the orders `ids`, or of all it holds. */
export async function giveBackLeases(db: Kysely<Database>, owner: string, ids?: string[]): Promise<void> {
  let update = db.updateTable('orders').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner);
  if (ids) update = update.where('id', 'in', ids);
  await update.execute();
}

/** Moves the lease of `owner` on an order to `until` (a heartbeat, or a pause after a failed step). */
export async function extendLease(db: Kysely<Database>, orderId: string, owner: string, until: number): Promise<void> {
  await db.updateTable('orders').set({ lease_until: until }).where('id', '=', orderId).where('lease_owner', '=', owner).execute();
}

/** An unleased order whose step failed: due again at `at`, unless something moved it meanwhile. */
export async function postpone(db: Kysely<Database>, order: Order, at: number): Promise<void> {
  await db
    .updateTable('orders')
    .set({ next_run_at: at })
    .where('id', '=', order.id)
    .where('next_run_at', '=', BigInt(order.nextRunAt ?? 0))
    .execute();
}

/** When the next order of `modes` falls due (an order under a lease not before the lease ends), or null. */
export async function nextDueAt(db: Kysely<Database>, modes: Mode[]): Promise<number | null> {
  const row = await db
    .selectFrom('orders')
    .select(sql<bigint | null>`min(case when lease_until > next_run_at then lease_until else next_run_at end)`.as('next'))
    .where('next_run_at', 'is not', null)
    .where('mode', 'in', modes)
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? null : Number(row.next);
}
