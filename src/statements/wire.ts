import { formatTon } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { formatUsdt } from '../domain/usdt.js';
import type { Statement } from './statement.js';

/**
 * A statement as JSON (docs/api.md "GET /statements/{month}"): TON as exact decimal strings,
 * times in RFC 3339. The API sends it; the operator's CLI adds the adjustments' reasons
 * (`withReasons`), which clients never see.
 */
export function statementBody(s: Statement, options: { withReasons?: boolean } = {}) {
  const totals = (t: { count: number; amount: bigint }) => ({ count: t.count, amount: formatTon(t.amount) });
  const balance = (b: { available: bigint; reserved: bigint }) => ({ value: formatTon(b.available), reserved: formatTon(b.reserved), currency: 'TON' as const });
  return {
    object: 'statement' as const,
    month: s.month,
    mode: s.mode,
    period_start: formatTimestamp(s.from),
    period_end: formatTimestamp(s.to),
    complete: s.complete,
    generated_at: formatTimestamp(s.generatedAt),
    opening_balance: balance(s.opening),
    deposits: {
      ...totals(s.deposits),
      ton: totals(s.deposits.ton),
      usdt: {
        ...totals(s.deposits.usdt),
        usdt: formatUsdt(s.deposits.usdt.usdt),
        items: s.deposits.usdt.lines.map((l) => ({
          tx_hash: l.txHash,
          usdt: formatUsdt(l.usdt),
          rate: l.rate,
          amount: formatTon(l.amount),
          credited_at: formatTimestamp(l.creditedAt),
        })),
      },
    },
    orders_placed: totals(s.placed),
    orders_delivered: {
      ...totals(s.delivered),
      by_product: s.delivered.products.map((p) => ({ product: p.product, count: p.count, quantity: Number(p.quantity), amount: formatTon(p.amount) })),
    },
    orders_failed: totals(s.failed),
    adjustments: {
      count: s.adjustments.count,
      credits: formatTon(s.adjustments.credits),
      debits: formatTon(s.adjustments.debits),
      net: formatTon(s.adjustments.amount),
      items: s.adjustments.lines.map((a) => ({ amount: formatTon(a.amount), created_at: formatTimestamp(a.createdAt), ...(options.withReasons && { reason: a.reason }) })),
    },
    closing_balance: balance(s.closing),
  };
}
