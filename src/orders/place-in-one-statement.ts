import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { formatTon } from '../domain/money.js';
import type { Product } from '../domain/products.js';
import { newId } from '../domain/random.js';
import { onPostgres, preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import type { Order } from './order.js';
import { newEntryIdHead } from '../ledger/entry-id.js';
import { reserveForNewOrderCtes } from '../ledger/reserve-in-statement.js';

/**
 * PostgreSQL: a new order placed in one statement, outside any explicit transaction. The
 * general path (create-order.ts) costs six round trips inside its transaction (BEGIN, the lock
 * cap, the order, its event, the reservation, COMMIT); this is one. It writes what that path
 * writes: the order, its `order.created` event and the reservation (balance row and journal
 * row), all committed together or not at all.
 *
 * Its locks come in the general path's order, the key's unique index entry and then the
 * balance row: each sub-statement reads the one before (the order insert reads the lock cap,
 * the balance update reads the inserted order), so they run in that order. (The other order
 * deadlocked against the general path on one key sent to two nodes at once.)
 * - The lock cap: `set_config(…, true)` is SET LOCAL for the statement's own transaction, set
 *   before the statement waits for any lock.
 * - A balance that does not cover the amount fails the balance row's CHECK (available >= 0),
 *   and the whole statement with it.
 *
 * It places nothing, and returns false, when the general path must answer instead:
 * - the available balance does not cover the amount (insufficient_balance, with the figures);
 * - the account has an enabled webhook endpoint in this mode: the event's outbox messages are
 *   written by the general path, in its transaction;
 * - the order takes the balance below its low-balance threshold: the general path writes the
 *   crossing's webhook event and notifications (src/notifications/notices.ts).
 * A key already taken raises the unique violation, as the general path's insert does.
 */
const placeOrder = preparedQuery(
  (
    db,
    lockTimeout: string,
    orderId: string,
    accountId: string,
    mode: Mode,
    idempotencyKey: string,
    fingerprint: string,
    product: Product,
    recipient: string,
    quantity: number,
    amount: bigint,
    externalId: string | null,
    now: number,
    eventId: string,
    eventData: string,
    journalIdHead: string,
  ) => {
    const query = sql<{ placed: number }>`
      with cap as (select set_config('lock_timeout', cast(${lockTimeout} as text), true) as lock_timeout),
      placed as (
        insert into orders (id, account_id, mode, idempotency_key, fingerprint, product, recipient, quantity, amount,
                            external_id, status, created_at, updated_at, next_run_at)
        select cast(${orderId} as text), cast(${accountId} as text), cast(${mode} as text), cast(${idempotencyKey} as text),
               cast(${fingerprint} as text), cast(${product} as text), cast(${recipient} as text), cast(${quantity} as bigint),
               cast(${amount} as bigint), cast(${externalId} as text), 'fulfillment_pending', cast(${now} as bigint),
               cast(${now} as bigint), cast(${now} as bigint)
         where (select lock_timeout from cap) is not null
           and not exists (
             select 1 from webhook_endpoints w
              where w.account_id = cast(${accountId} as text) and w.mode = cast(${mode} as text) and w.status = 'enabled')
           and not exists (
             select 1 from balances b
              where b.account_id = cast(${accountId} as text) and b.mode = cast(${mode} as text)
                and b.available >= b.low_balance_threshold and b.available - cast(${amount} as bigint) < b.low_balance_threshold)
        returning order_no
      ),
      ${reserveForNewOrderCtes({ orderCte: 'placed', orderId, accountId, mode, amount, now, journalIdHead })},
      appended as (
        insert into order_events (id, order_id, order_no, seq, type, status, data, created_at)
        select cast(${eventId} as text), cast(${orderId} as text), placed.order_no, 1, 'order.created', 'fulfillment_pending',
               cast(${eventData} as text), cast(${now} as bigint)
          from moved, placed
      )
      select 1 as placed from moved`;
    return { compile: () => query.compile(db) };
  },
);

/** Whether placeInOneStatement can be tried on this database. */
export const placesInOneStatement = onPostgres;

/**
 * Places `order` (status fulfillment_pending, not quoted) with its reservation; false when the
 * general path must answer (see placeOrder). Throws the unique violation of a taken key and the
 * lock cap's timeout, as the general path does.
 */
export async function placeInOneStatement(db: Kysely<Database>, order: Order, lockWaitMs: number): Promise<boolean> {
  const placed = placeOrder(
    db,
    `${Math.floor(lockWaitMs)}ms`,
    order.id,
    order.accountId,
    order.mode,
    order.idempotencyKey,
    order.fingerprint,
    order.product,
    order.recipient,
    order.quantity,
    order.amount,
    order.externalId,
    order.createdAt,
    newId('evt'),
    JSON.stringify({ amount: formatTon(order.amount) }),
    newEntryIdHead(),
  );
  try {
    return (await placed).length === 1;
  } catch (error) {
    // The balance row's CHECK: the amount is not covered, and the statement wrote nothing.
    if (isCheckViolation(error)) return false;
    throw error;
  }
}

const isCheckViolation = (error: unknown) => typeof error === 'object' && error !== null && 'code' in error && error.code === '23514';
