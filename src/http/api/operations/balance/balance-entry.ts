import { type Static, Type } from '@sinclair/typebox';
import { formatTon } from '../../../../domain/money.js';
import { formatTimestamp } from '../../../../domain/time.js';
import type { JournalEntry } from '../../../../ledger/ledger.js';
import { Closed, component, Money, NullableString, OneOf, PublicId, SignedMoney, Timestamp, Ton } from '../shared.js';

/**
 * One movement of a balance, as GET /balance/history lists it and POST /test_helpers/fund
 * answers it (docs/api.md "GET /balance/history").
 */

export const BalanceEntry = component(
  'BalanceEntry',
  Closed(
    {
      id: PublicId('jrn', 'Entry id (a cursor for `starting_after` / `ending_before`).'),
      type: OneOf(['deposit', 'reserve', 'debit', 'release', 'adjustment'] as const, {
        description:
          '`deposit`: money in (a top-up, or test funding); `reserve`: an order was created (value → reserved); `debit`: an order was delivered (reserved spent); `release`: an order failed (reserved → value); `adjustment`: an operator correction.',
      }),
      amount: SignedMoney({ description: 'The signed change of `balance.value`. All amounts sum to the current `balance.value`.' }),
      reserved_change: SignedMoney({ description: 'The signed change of `balance.reserved`. All of them sum to the current `balance.reserved`.' }),
      balance_after: Closed({ value: Money(), reserved: Money(), currency: Ton }, 'The balance right after this entry.'),
      order_id: NullableString({ description: 'The order of a `reserve`, `debit` or `release`; otherwise `null`.' }),
      deposit: Type.Unsafe<{ reference: string | null } | null>({
        oneOf: [
          { type: 'null' },
          Closed({
            reference: NullableString({
              description:
                'The transaction hash of a top-up (for USDT with the amount, the rate and the spread it was converted at), or the request id (`req_…`) of a test funding.',
            }),
          }),
        ],
        description: 'For a `deposit`: its reference; otherwise `null`.',
      }),
      created_at: Timestamp(),
    },
    'One movement of the balance.',
  ),
);

export type BalanceEntryBody = Static<typeof BalanceEntry.schema>;

/**
 * `amount` is the signed change of `balance.value` (what can be spent) and `reserved_change`
 * that of `balance.reserved`, so the amounts of all entries sum to the current balance.value
 * and the reserved changes to balance.reserved.
 */
export function entryBody(entry: JournalEntry): BalanceEntryBody {
  return {
    id: entry.id,
    type: entry.kind,
    amount: formatTon(entry.availableDelta),
    reserved_change: formatTon(entry.reservedDelta),
    balance_after: { value: formatTon(entry.after.available), reserved: formatTon(entry.after.reserved), currency: 'TON' },
    order_id: entry.orderId,
    // The reason of a deposit is its reference (a chain transaction, or the request id of a
    // test funding). Operator adjustments' reasons are internal notes and are not shown.
    deposit: entry.kind === 'deposit' ? { reference: entry.reason } : null,
    created_at: formatTimestamp(entry.createdAt),
  };
}

/** A deposit entry, for the examples. */
export const DEPOSIT_ENTRY_EXAMPLE: BalanceEntryBody = {
  id: 'jrn_1bK4lQ0tR3xF6sU9zV2jPq1',
  type: 'deposit',
  amount: '12.5',
  reserved_change: '0',
  balance_after: { value: '12.5', reserved: '0', currency: 'TON' },
  order_id: null,
  deposit: { reference: 'req_4Xb0Yw3kq9T2mZlF8sV1aC' },
  created_at: '2026-11-25T21:29:00.000Z',
};
