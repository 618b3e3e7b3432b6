import { type RawBuilder, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { addToBalanceDayFromMoved } from './balance-days.js';
import { entryIdSql } from './entry-id.js';

/**
 * The reserve of a new order as two common table expressions of a larger PostgreSQL statement
 * (the one-statement placement, src/orders/place-in-one-statement.ts), so that its SQL is written
 * here with every other movement's:
 *
 * - `moved` moves `amount` from available to reserved on the balance row, once the order's own
 *   CTE (`orderCte`, which returns the order's `order_no`) has inserted it, and returns the new
 *   balance and its journal seq. A balance that does not cover the amount fails the row's CHECK
 *   (available >= 0), and the whole statement with it.
 * - `journaled` appends the `reserve` journal entry with that seq and balance.
 * - `balance_day` takes the amount off the day's net in balance_days (balance-days.ts).
 *
 * Both carry the same figures as `applyMovement`'s reserve (ledger.ts). Each argument goes into
 * the SQL as a value, as preparedQuery needs (src/db/prepared.ts).
 */
export function reserveForNewOrderCtes(input: {
  orderCte: string;
  orderId: string;
  accountId: string;
  mode: Mode;
  amount: bigint;
  now: number;
  journalIdHead: string;
}): RawBuilder<unknown> {
  const { accountId, mode, amount, orderId, now, journalIdHead } = input;
  const order = sql.table(input.orderCte);
  return sql`moved as (
        update balances
           set available = available - cast(${amount} as bigint),
               reserved = reserved + cast(${amount} as bigint),
               journal_seq = journal_seq + 1
         where account_id = cast(${accountId} as text) and mode = cast(${mode} as text) and exists (select 1 from ${order})
        returning available, reserved, journal_seq
      ),
      journaled as (
        insert into journal (id, account_id, mode, kind, order_id, order_no, available_delta, reserved_delta, reason,
                             created_at, seq, balance_available, balance_reserved)
        select ${entryIdSql(journalIdHead, sql.ref('journal_seq'))}, cast(${accountId} as text), cast(${mode} as text), 'reserve',
               cast(${orderId} as text), ${order}.order_no, -cast(${amount} as bigint), cast(${amount} as bigint), null,
               cast(${now} as bigint), journal_seq, available, reserved
          from moved, ${order}
      ),
      balance_day as (${addToBalanceDayFromMoved({ accountId, mode, now, net: sql<bigint>`-cast(${amount} as bigint)` })})`;
}
