import { type Kysely, sql } from 'kysely';
import type { Database, JournalTable } from '../db/schema.js';
import type { Balance, BalanceRef } from './ledger.js';

/**
 * The ledger over a period [from, to) of one balance, for monthly statements
 * (docs/architecture.md "Monthly statements"): the balance at `from` and the journal's
 * movements dated in the period, summed by kind and, for an order's movements, by the order's
 * product. A movement belongs to the period its journal row's `created_at` falls in, the same
 * date the daily rollup (balance-days.ts) uses. Every figure is a sum of journal rows read in
 * one snapshot, so opening + movements = closing holds to the nanoton. The orders table is read
 * for the product and quantity only, as `ledger verify` reads it for the amounts.
 */

type Kind = JournalTable['kind'];

interface PeriodMovements {
  kind: Kind;
  /** The order's product; null for deposits and adjustments. */
  product: 'stars' | 'premium' | null;
  count: number;
  availableDelta: bigint;
  reservedDelta: bigint;
  /** The orders' quantities summed (Stars, or Premium months); 0 without an order. */
  quantity: bigint;
}

export interface PeriodAdjustment {
  createdAt: number;
  amount: bigint;
  reason: string | null;
}

export interface LedgerPeriod {
  opening: Balance;
  movements: PeriodMovements[];
  adjustments: PeriodAdjustment[];
}

/** Engines return sums as bigint, number or numeric text (PostgreSQL), or null over no rows. */
const toBigInt = (value: unknown): bigint => (value === null || value === undefined ? 0n : BigInt(String(value)));

export async function ledgerPeriod(db: Kysely<Database>, ref: BalanceRef, from: number, to: number): Promise<LedgerPeriod> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const before = await tx
        .selectFrom('journal')
        .select([sql`sum(available_delta)`.as('available'), sql`sum(reserved_delta)`.as('reserved')])
        .where('account_id', '=', ref.accountId)
        .where('mode', '=', ref.mode)
        .where('created_at', '<', BigInt(from))
        .executeTakeFirst();
      const grouped = await tx
        .selectFrom('journal as j')
        .leftJoin('orders as o', 'o.order_no', 'j.order_no')
        .select([
          'j.kind',
          'o.product',
          sql`count(*)`.as('n'),
          sql`sum(j.available_delta)`.as('available'),
          sql`sum(j.reserved_delta)`.as('reserved'),
          sql`sum(o.quantity)`.as('quantity'),
        ])
        .where('j.account_id', '=', ref.accountId)
        .where('j.mode', '=', ref.mode)
        .where('j.created_at', '>=', BigInt(from))
        .where('j.created_at', '<', BigInt(to))
        .groupBy(['j.kind', 'o.product'])
        .execute();
      const adjustments = await tx
        .selectFrom('journal')
        .select(['created_at', 'available_delta', 'reason'])
        .where('account_id', '=', ref.accountId)
        .where('mode', '=', ref.mode)
        .where('kind', '=', 'adjustment')
        .where('created_at', '>=', BigInt(from))
        .where('created_at', '<', BigInt(to))
        .orderBy('seq')
        .execute();
      return {
        opening: { available: toBigInt(before?.available), reserved: toBigInt(before?.reserved) },
        movements: grouped.map((row) => ({
          kind: row.kind,
          product: row.product ?? null,
          count: Number(row.n),
          availableDelta: toBigInt(row.available),
          reservedDelta: toBigInt(row.reserved),
          quantity: toBigInt(row.quantity),
        })),
        adjustments: adjustments.map((row) => ({ createdAt: Number(row.created_at), amount: toBigInt(row.available_delta), reason: row.reason })),
      };
    });
}
