import type { Kysely } from 'kysely';
import { findAccount } from '../accounts/admin.js';
import type { Mode } from '../domain/api-key.js';
import type { Database } from '../db/schema.js';
import { usdtCreditedBetween } from '../deposits/store.js';
import type { Balance } from '../ledger/ledger.js';
import { type LedgerPeriod, ledgerPeriod, type PeriodAdjustment } from '../ledger/period.js';
import { compareMonths, formatMonth, type Month, monthOf, monthRange, monthsBetween } from './month.js';

/**
 * A monthly statement (docs/api.md "GET /statements/{month}", docs/architecture.md "Monthly
 * statements"): one balance (account and mode) over one calendar month in UTC, read from the
 * ledger (src/ledger/period.ts). Every amount is bigint nanotons. The statement covers both
 * sides of the balance: `available` (what can be spent) and `reserved` (held for orders in
 * flight). An order is reserved when it is created (available → reserved), debited when
 * delivered (reserved → gone) and released when it fails (reserved → available), each in the
 * month its movement is dated, so an order placed on 31 January and delivered on 1 February
 * is "placed" in January's statement (closing with it reserved) and "delivered" in February's.
 *
 *   closing.available = opening.available + deposits + adjustments − placed + failed
 *   closing.reserved  = opening.reserved  + placed − delivered − failed
 */

interface Amounts {
  count: number;
  amount: bigint;
}

interface ProductLine extends Amounts {
  product: 'stars' | 'premium';
  /** Stars, or Premium months. */
  quantity: bigint;
}

interface UsdtLine {
  txHash: string;
  /** USDT units (6 decimals). */
  usdt: bigint;
  /** USD per TON, decimal text, the rate it was converted at. */
  rate: string | null;
  amount: bigint;
  creditedAt: number;
}

export interface Statement {
  accountId: string;
  mode: Mode;
  month: string;
  from: number;
  to: number;
  /** False for the current month: its figures run to `generatedAt`. */
  complete: boolean;
  generatedAt: number;
  opening: Balance;
  deposits: Amounts & { ton: Amounts; usdt: Amounts & { usdt: bigint; lines: UsdtLine[] } };
  /** Orders created this month: their amounts moved from available to reserved. */
  placed: Amounts;
  delivered: Amounts & { products: ProductLine[] };
  /** Orders that failed this month: their amounts released to available. */
  failed: Amounts;
  adjustments: Amounts & { credits: bigint; debits: bigint; lines: PeriodAdjustment[] };
  closing: Balance;
}

type Unavailable = { reason: 'not_begun' | 'before_account'; message: string };

/** The months an account has statements for: from the month it was created to the current one. */
export function statementMonths(createdAt: number, now: number): Month[] {
  return monthsBetween(monthOf(createdAt), monthOf(now)).reverse();
}

/** Why `month` has no statement for an account created at `createdAt`, or undefined if it has one. */
function unavailable(month: Month, createdAt: number, now: number): Unavailable | undefined {
  const first = monthOf(createdAt);
  const last = monthOf(now);
  const span = `statements cover ${formatMonth(first)} to ${formatMonth(last)}`;
  if (compareMonths(month, last) > 0) return { reason: 'not_begun', message: `No statement for ${formatMonth(month)}: that month has not begun (${span}).` };
  if (compareMonths(month, first) < 0) {
    return { reason: 'before_account', message: `No statement for ${formatMonth(month)}: the account did not exist yet (${span}).` };
  }
  return undefined;
}

export class StatementUnavailable extends Error {
  constructor(readonly why: Unavailable) {
    super(why.message);
  }
}

/** The statement of an account's balance in `mode` for `month`; StatementUnavailable outside its months, undefined for no such account. */
export async function accountStatement(db: Kysely<Database>, input: { accountId: string; mode: Mode; month: Month }, now = Date.now()): Promise<Statement | undefined> {
  const account = await findAccount(db, input.accountId);
  if (!account) return undefined;
  const why = unavailable(input.month, account.createdAt, now);
  if (why) throw new StatementUnavailable(why);
  return buildStatement(db, input, now);
}

/** The statement, without the account's months checked (the operator's every-account reports check them once). */
export async function buildStatement(db: Kysely<Database>, input: { accountId: string; mode: Mode; month: Month }, now = Date.now()): Promise<Statement> {
  const { from, to } = monthRange(input.month);
  const period = await ledgerPeriod(db, { accountId: input.accountId, mode: input.mode }, from, to);
  // Only the live balance takes deposits from the chain; a test balance's deposits are test funds (TON).
  const usdt = input.mode === 'live' ? await usdtCreditedBetween(db, input.accountId, from, to) : [];
  return compose(period, usdt, { ...input, from, to, now });
}

function compose(
  period: LedgerPeriod,
  usdtDeposits: Awaited<ReturnType<typeof usdtCreditedBetween>>,
  at: { accountId: string; mode: Mode; month: Month; from: number; to: number; now: number },
): Statement {
  const sum = (kind: string) => {
    const rows = period.movements.filter((m) => m.kind === kind);
    return {
      count: rows.reduce((n, m) => n + m.count, 0),
      available: rows.reduce((n, m) => n + m.availableDelta, 0n),
      reserved: rows.reduce((n, m) => n + m.reservedDelta, 0n),
    };
  };
  const deposit = sum('deposit');
  const reserve = sum('reserve');
  const debit = sum('debit');
  const release = sum('release');
  const adjustment = sum('adjustment');
  const usdtLines: UsdtLine[] = usdtDeposits.map((d) => ({ txHash: d.txHash, usdt: d.jettonAmount ?? 0n, rate: d.rate, amount: d.amount, creditedAt: d.creditedAt ?? 0 }));
  const usdtAmount = usdtLines.reduce((n, l) => n + l.amount, 0n);
  const products = (['stars', 'premium'] as const).flatMap((product) => {
    const row = period.movements.find((m) => m.kind === 'debit' && m.product === product);
    return row ? [{ product, count: row.count, quantity: row.quantity, amount: -row.reservedDelta }] : [];
  });
  const closing = {
    available: period.opening.available + deposit.available + adjustment.available + reserve.available + release.available,
    reserved: period.opening.reserved + reserve.reserved + debit.reserved + release.reserved,
  };
  return {
    accountId: at.accountId,
    mode: at.mode,
    month: formatMonth(at.month),
    from: at.from,
    to: at.to,
    complete: at.now >= at.to,
    generatedAt: at.now,
    opening: period.opening,
    deposits: {
      count: deposit.count,
      amount: deposit.available,
      ton: { count: deposit.count - usdtLines.length, amount: deposit.available - usdtAmount },
      usdt: { count: usdtLines.length, amount: usdtAmount, usdt: usdtLines.reduce((n, l) => n + l.usdt, 0n), lines: usdtLines },
    },
    placed: { count: reserve.count, amount: reserve.reserved },
    delivered: { count: debit.count, amount: -debit.reserved, products },
    failed: { count: release.count, amount: release.available },
    adjustments: {
      count: adjustment.count,
      amount: adjustment.available,
      credits: period.adjustments.reduce((n, a) => (a.amount > 0n ? n + a.amount : n), 0n),
      debits: period.adjustments.reduce((n, a) => (a.amount < 0n ? n - a.amount : n), 0n),
      lines: period.adjustments,
    },
    closing,
  };
}
