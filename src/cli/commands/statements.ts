import type { Mode } from '../../domain/api-key.js';
import { formatUsdt } from '../../domain/usdt.js';
import { statementCsv } from '../../statements/csv.js';
import { parseMonth, type Month } from '../../statements/month.js';
import { everyAccountCsv, everyAccountStatements, MonthNotBegun, revenueCsv, revenueOf } from '../../statements/reports.js';
import { accountStatement, type Statement, StatementUnavailable } from '../../statements/statement.js';
import { statementBody } from '../../statements/wire.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { modeOf, operatorCommand, refuse, table, time, ton } from '../operator.js';

/**
 * Monthly statements for the operator (docs/operations.md "Monthly statements"): one account's,
 * every account's as one CSV, and a month's revenue report. The figures come from
 * src/statements/ (the ledger), the same as the API's and the dashboard's.
 */

const MONTH_HELP = 'MONTH is a calendar month in UTC, YYYY-MM (e.g. 2026-10); the current month runs to now.';

function monthOf(values: Record<string, unknown>): Month {
  const text = required(values, 'month');
  const month = parseMonth(text);
  if (!month) throw new UsageError(`--month must be a month written YYYY-MM, e.g. 2026-10, got "${text}"`);
  return month;
}

function statementText(s: Statement): string {
  const rows: (string | number | null)[][] = [
    ['opening balance', null, null, `${ton(s.opening.available)} available, ${ton(s.opening.reserved)} reserved`],
    ['deposits TON', s.deposits.ton.count, null, ton(s.deposits.ton.amount)],
    ['deposits USDT', s.deposits.usdt.count, `${formatUsdt(s.deposits.usdt.usdt)} USDT`, ton(s.deposits.usdt.amount)],
    ...s.deposits.usdt.lines.map((l) => [`  ${l.txHash.slice(0, 16)}…`, null, `${formatUsdt(l.usdt)} USDT at ${l.rate ?? '?'}`, ton(l.amount)]),
    ['orders placed (reserved)', s.placed.count, null, ton(s.placed.amount)],
    ...s.delivered.products.map((p) => [`orders delivered ${p.product}`, p.count, String(p.quantity), ton(p.amount)]),
    ['orders failed (released)', s.failed.count, null, ton(s.failed.amount)],
    ['adjustments', s.adjustments.count, null, ton(s.adjustments.amount)],
    ...s.adjustments.lines.map((a) => [`  ${time(a.createdAt)}`, null, a.reason, ton(a.amount)]),
    ['closing balance', null, null, `${ton(s.closing.available)} available, ${ton(s.closing.reserved)} reserved`],
  ];
  const status = s.complete ? 'complete' : `to ${time(s.generatedAt)}, the month is not over`;
  return `statement of ${s.accountId} (${s.mode}) for ${s.month}: ${status}\n${table(['line', 'count', 'quantity', 'TON'], rows)}`;
}

export const statementAll: Command = operatorCommand({
  path: ['statement', 'all'],
  summary: "Every account's live statement for a month, as one CSV",
  usage:
    'starport statement all --month MONTH [--json]\n\n' +
    `${MONTH_HELP}\nOne CSV row per account that existed during the month (oldest first): opening, deposits, orders, adjustments, closing.\n` +
    'Test balances are left out. --json prints the statements as JSON instead.',
  options: { month: { type: 'string' } },
  async run(values, io) {
    const month = monthOf(values);
    try {
      const rows = await withDatabase((db) => everyAccountStatements(db.kysely, month));
      if (io.json) io.result({ statements: rows.map(({ email, statement }) => ({ email, ...statementBody(statement, { withReasons: true }) })) }, '');
      else process.stdout.write(everyAccountCsv(rows));
      return 0;
    } catch (error) {
      if (error instanceof MonthNotBegun) return refuse(io, error.message);
      throw error;
    }
  },
});

export const statementRevenue: Command = operatorCommand({
  path: ['statement', 'revenue'],
  summary: "A month's revenue report: orders delivered per account and product, as CSV",
  usage:
    'starport statement revenue --month MONTH [--json]\n\n' +
    `${MONTH_HELP}\nRevenue is what clients were charged for the live orders delivered in the month (their ledger debits), per account\n` +
    'and product, with a total row; failed orders were released and are not revenue. Test orders are left out.',
  options: { month: { type: 'string' } },
  async run(values, io) {
    const month = monthOf(values);
    try {
      const revenue = revenueOf(await withDatabase((db) => everyAccountStatements(db.kysely, month)));
      if (io.json) {
        io.result(
          {
            lines: revenue.lines.map((l) => ({
              account_id: l.accountId,
              email: l.email,
              product: l.product,
              orders: l.orders,
              quantity: Number(l.quantity),
              amount: ton(l.amount),
            })),
            total: { orders: revenue.total.orders, amount: ton(revenue.total.amount) },
          },
          '',
        );
      } else process.stdout.write(revenueCsv(month, revenue));
      return 0;
    } catch (error) {
      if (error instanceof MonthNotBegun) return refuse(io, error.message);
      throw error;
    }
  },
});

export const statement: Command = operatorCommand({
  path: ['statement', 'show'],
  summary: "An account's monthly statement",
  usage:
    'starport statement show --account ACCOUNT_ID --month MONTH [--mode live|test (live)] [--csv] [--json]\n\n' +
    `${MONTH_HELP}\nThe same figures as the client's GET /statements/{month} and dashboard, with the adjustments' reasons.\n` +
    '--csv prints the statement as CSV. Every account at once: `starport statement all`; revenue: `starport statement revenue`.',
  options: { account: { type: 'string' }, month: { type: 'string' }, mode: { type: 'string' }, csv: { type: 'boolean' } },
  async run(values, io) {
    const accountId = required(values, 'account');
    const month = monthOf(values);
    const mode: Mode = modeOf(values, { optional: true }) ?? 'live';
    if (values.csv && io.json) throw new UsageError('give --csv or --json, not both');
    try {
      const found = await withDatabase((db) => accountStatement(db.kysely, { accountId, mode, month }));
      if (!found) return refuse(io, `no account ${accountId}`);
      if (values.csv) process.stdout.write(statementCsv(found, { withReasons: true }));
      else io.result({ ok: true, account_id: found.accountId, ...statementBody(found, { withReasons: true }) }, statementText(found));
      return 0;
    } catch (error) {
      if (error instanceof StatementUnavailable) return refuse(io, error.message);
      throw error;
    }
  },
});
