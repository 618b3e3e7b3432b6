import { type Kysely, sql } from 'kysely';
import { MODES, type Mode } from '../domain/api-key.js';
import { ORDER_STATUSES, type OrderStatus } from '../domain/order-status.js';
import type { Database } from '../db/schema.js';

/**
 * `starport stats`: the numbers an operator looks at every morning. All sums are exact
 * nanotons (bigint); counts are numbers. Read in one transaction: one consistent snapshot.
 */
export interface Stats {
  accounts: { total: number; active: number; disabled: number };
  /** Sums over all accounts: what clients hold (available) and what open orders hold (reserved). */
  balances: Record<Mode, { available: bigint; reserved: bigint }>;
  /** Orders created since `since` (the start of today, UTC), by mode and status. */
  ordersToday: { since: number; counts: Record<Mode, Record<OrderStatus, number>> };
  /** Orders not final yet, whenever created: the queue and the orders held for review. */
  open: Record<Mode, { fulfillment_pending: number; processing: number }>;
  /** Delivered amounts posted (journal debits) in [since, until). */
  revenue: { since: number; until: number; byMode: Record<Mode, { amount: bigint; orders: number }> };
}

const big = (value: unknown): bigint => (value === null || value === undefined ? 0n : BigInt(String(value)));

export function startOfUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

const byMode = <T>(make: () => T): Record<Mode, T> => ({ live: make(), test: make() });
const statusCounts = () => Object.fromEntries(ORDER_STATUSES.map((s) => [s, 0])) as Record<OrderStatus, number>;

export async function collectStats(db: Kysely<Database>, period: { since: number; until: number }, now: number): Promise<Stats> {
  return db.transaction().execute(async (tx) => {
    const accounts = await tx
      .selectFrom('accounts')
      .select(['status', sql`count(*)`.as('n')])
      .groupBy('status')
      .execute();
    const accountCounts = { total: 0, active: 0, disabled: 0 };
    for (const row of accounts) {
      const n = Number(big(row.n));
      accountCounts.total += n;
      accountCounts[row.status] += n;
    }

    const balances = byMode(() => ({ available: 0n, reserved: 0n }));
    const sums = await tx
      .selectFrom('balances')
      .select(['mode', sql`sum(available)`.as('available'), sql`sum(reserved)`.as('reserved')])
      .groupBy('mode')
      .execute();
    for (const row of sums) balances[row.mode] = { available: big(row.available), reserved: big(row.reserved) };

    const todaySince = startOfUtcDay(now);
    const counts = byMode(statusCounts);
    const today = await tx
      .selectFrom('orders')
      .select(['mode', 'status', sql`count(*)`.as('n')])
      .where('created_at', '>=', BigInt(todaySince))
      .groupBy(['mode', 'status'])
      .execute();
    for (const row of today) counts[row.mode][row.status] = Number(big(row.n));

    const open = byMode(() => ({ fulfillment_pending: 0, processing: 0 }));
    const openRows = await tx
      .selectFrom('orders')
      .select(['mode', 'status', sql`count(*)`.as('n')])
      .where('status', 'in', ['fulfillment_pending', 'processing'])
      .groupBy(['mode', 'status'])
      .execute();
    for (const row of openRows) open[row.mode][row.status as 'fulfillment_pending' | 'processing'] = Number(big(row.n));

    const revenue = byMode(() => ({ amount: 0n, orders: 0 }));
    const debits = await tx
      .selectFrom('journal')
      .select(['mode', sql`sum(reserved_delta)`.as('amount'), sql`count(*)`.as('n')])
      .where('kind', '=', 'debit')
      .where('created_at', '>=', BigInt(period.since))
      .where('created_at', '<', BigInt(period.until))
      .groupBy('mode')
      .execute();
    for (const row of debits) {
      if ((MODES as readonly string[]).includes(row.mode)) revenue[row.mode] = { amount: -big(row.amount), orders: Number(big(row.n)) };
    }

    return {
      accounts: accountCounts,
      balances,
      ordersToday: { since: todaySince, counts },
      open,
      revenue: { since: period.since, until: period.until, byMode: revenue },
    };
  });
}
