import { formatTon } from '../../domain/money.js';
import type { JournalEntry } from '../../ledger/ledger.js';
import { formatTimestamp } from '../../domain/time.js';

/**
^ * A balance history entry. `amount` is the signed change of `balance.value` (what can
 * be spent) and `reserved_change` that of `balance.reserved`, so the amounts of all entries sum
 * to the current balance.value and the reserved changes to balance.reserved.
 */
export function entryBody(entry: JournalEntry) {
  return {
    id: entry.id,
    type: entry.kind,
    amount: formatTon(entry.availableDelta),
    reserved_change: formatTon(entry.reservedDelta),
    balance_after: { value: formatTon(entry.after.available), reserved: formatTon(entry.after.reserved), currency: 'TON' as const },
    order_id: entry.orderId,
    // The reason of a deposit is its reference (a chain transaction, or the request id of a
    // test funding). Operator adjustments' reasons are internal notes and are not shown.
    deposit: entry.kind === 'deposit' ? { reference: entry.reason } : null,
    created_at: formatTimestamp(entry.createdAt),
  };
}
