import type { Kysely } from 'kysely';
import { accountsCreatedBefore } from '../accounts/admin.js';
import { formatTon } from '../domain/money.js';
import { formatUsdt } from '../domain/usdt.js';
import type { Database } from '../db/schema.js';
import { tableCsv } from './csv.js';
import { formatMonth, type Month, monthOf, monthRange } from './month.js';
import { buildStatement, type Statement } from './statement.js';

/**
 * The operator's monthly reports (docs/operations.md "Monthly statements"), plain functions for
 * the CLI (src/cli/commands/statements.ts) and any other operator face: every account's live
 * statement for a month, and the month's revenue (orders delivered, by account and product).
 * Test balances are left out: test money is not revenue.
 */

export class MonthNotBegun extends Error {}

/** The live statement of every account that existed during `month`, oldest account first. */
export async function everyAccountStatements(db: Kysely<Database>, month: Month, now = Date.now()): Promise<{ email: string; statement: Statement }[]> {
  if (monthRange(month).from > now) throw new MonthNotBegun(`${formatMonth(month)} has not begun (the current month is ${formatMonth(monthOf(now))})`);
  const accounts = await accountsCreatedBefore(db, monthRange(month).to);
  const statements: { email: string; statement: Statement }[] = [];
  for (const account of accounts) statements.push({ email: account.email, statement: await buildStatement(db, { accountId: account.id, mode: 'live', month }, now) });
  return statements;
}

const EVERY_HEADER = [
  'account_id',
  'email',
  'month',
  'complete',
  'opening_available_ton',
  'opening_reserved_ton',
  'deposits_ton',
  'deposits_usdt_ton',
  'usdt_received',
  'orders_placed',
  'orders_placed_ton',
  'orders_delivered',
  'orders_delivered_ton',
  'orders_failed',
  'orders_failed_ton',
  'adjustments_ton',
  'closing_available_ton',
  'closing_reserved_ton',
];

export function everyAccountCsv(rows: { email: string; statement: Statement }[]): string {
  return tableCsv(
    EVERY_HEADER,
    rows.map(({ email, statement: s }) => [
      s.accountId,
      email,
      s.month,
      s.complete ? 'yes' : 'no',
      formatTon(s.opening.available),
      formatTon(s.opening.reserved),
      formatTon(s.deposits.ton.amount),
      formatTon(s.deposits.usdt.amount),
      formatUsdt(s.deposits.usdt.usdt),
      s.placed.count,
      formatTon(s.placed.amount),
      s.delivered.count,
      formatTon(s.delivered.amount),
      s.failed.count,
      formatTon(s.failed.amount),
      formatTon(s.adjustments.amount),
      formatTon(s.closing.available),
      formatTon(s.closing.reserved),
    ]),
    ['text', 'text', 'text', 'text', ...EVERY_HEADER.slice(4).map(() => 'number' as const)],
  );
}

interface RevenueLine {
  accountId: string;
  email: string;
  product: 'stars' | 'premium';
  orders: number;
  quantity: bigint;
  amount: bigint;
}

/** A month's revenue: the orders delivered in it (their debits), per account and product, and the total. */
export function revenueOf(rows: { email: string; statement: Statement }[]): { lines: RevenueLine[]; total: { orders: number; amount: bigint } } {
  const lines = rows.flatMap(({ email, statement }) =>
    statement.delivered.products.map((p) => ({ accountId: statement.accountId, email, product: p.product, orders: p.count, quantity: p.quantity, amount: p.amount })),
  );
  return { lines, total: { orders: lines.reduce((n, l) => n + l.orders, 0), amount: lines.reduce((n, l) => n + l.amount, 0n) } };
}

export function revenueCsv(month: Month, revenue: ReturnType<typeof revenueOf>): string {
  const rows: (string | number | null)[][] = revenue.lines.map((l) => [formatMonth(month), l.accountId, l.email, l.product, l.orders, String(l.quantity), formatTon(l.amount)]);
  rows.push([formatMonth(month), 'total', null, null, revenue.total.orders, null, formatTon(revenue.total.amount)]);
  return tableCsv(['month', 'account_id', 'email', 'product', 'orders_delivered', 'quantity', 'amount_ton'], rows, ['text', 'text', 'text', 'text', 'number', 'number', 'number']);
}
