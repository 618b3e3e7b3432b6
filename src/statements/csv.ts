import { csvCell } from '../domain/csv.js';
import { formatTon } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { formatUsdt } from '../domain/usdt.js';
import type { Statement } from './statement.js';

/**
 * A statement as CSV (docs/dashboard.md "Statements", docs/operations.md "Monthly statements"):
 * one line per figure, under the header below, amounts in TON as exact decimals. Text cells go
 * through csvCell, so a reason or reference a spreadsheet would run as a formula is neutralised.
 * The client's copy (the dashboard) leaves the operator's adjustment reasons out, as the API
 * does; the operator's (`withReasons`) has them.
 */
export const STATEMENT_CSV_HEADER = 'section,item,date,count,quantity,amount_ton';

type Cell = string | number | bigint | null;
const line = (cells: Cell[], kinds: ('text' | 'number')[]) => cells.map((cell, i) => csvCell(cell === null ? null : String(cell), kinds[i])).join(',');
const KINDS: ('text' | 'number')[] = ['text', 'text', 'text', 'number', 'text', 'number'];

export function statementCsv(s: Statement, options: { withReasons?: boolean } = {}): string {
  const rows: Cell[][] = [
    ['account', s.accountId, null, null, null, null],
    ['month', `${s.month} (${s.mode})`, formatTimestamp(s.from), null, null, null],
    ['status', s.complete ? 'complete' : `to ${formatTimestamp(s.generatedAt)}`, null, null, null, null],
    ['opening balance', 'available', formatTimestamp(s.from), null, null, formatTon(s.opening.available)],
    ['opening balance', 'reserved', formatTimestamp(s.from), null, null, formatTon(s.opening.reserved)],
    ['deposits', 'TON', null, s.deposits.ton.count, null, formatTon(s.deposits.ton.amount)],
    ['deposits', 'USDT', null, s.deposits.usdt.count, `${formatUsdt(s.deposits.usdt.usdt)} USDT`, formatTon(s.deposits.usdt.amount)],
    ...s.deposits.usdt.lines.map((l): Cell[] => [
      'USDT deposit',
      `${l.txHash} at ${l.rate ?? '?'} USD/TON`,
      formatTimestamp(l.creditedAt),
      1,
      `${formatUsdt(l.usdt)} USDT`,
      formatTon(l.amount),
    ]),
    ['orders placed (reserved)', 'all', null, s.placed.count, null, formatTon(-s.placed.amount)],
    ...s.delivered.products.map((p): Cell[] => ['orders delivered', p.product, null, p.count, String(p.quantity), formatTon(p.amount)]),
    ['orders failed (released)', 'all', null, s.failed.count, null, formatTon(s.failed.amount)],
    ['adjustments', 'credits', null, null, null, formatTon(s.adjustments.credits)],
    ['adjustments', 'debits', null, null, null, formatTon(-s.adjustments.debits)],
    ...s.adjustments.lines.map((a): Cell[] => [
      'adjustment',
      options.withReasons ? (a.reason ?? '') : 'operator adjustment',
      formatTimestamp(a.createdAt),
      1,
      null,
      formatTon(a.amount),
    ]),
    ['closing balance', 'available', formatTimestamp(Math.min(s.to, s.generatedAt)), null, null, formatTon(s.closing.available)],
    ['closing balance', 'reserved', formatTimestamp(Math.min(s.to, s.generatedAt)), null, null, formatTon(s.closing.reserved)],
  ];
  return `${[STATEMENT_CSV_HEADER, ...rows.map((row) => line(row, KINDS))].join('\r\n')}\r\n`;
}

/** A table as CSV: the header, then each row (text cells neutralised, numbers as they are). */
export function tableCsv(header: string[], rows: Cell[][], kinds: ('text' | 'number')[]): string {
  return `${[header.join(','), ...rows.map((row) => line(row, kinds))].join('\r\n')}\r\n`;
}
