import type { Kysely } from 'kysely';
import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import type { Product } from '../domain/products.js';
import { newId } from '../domain/random.js';
import type { Database, QuoteRow } from '../db/schema.js';

/**
 * Price-locked quotes (issue 6): GET /quote stores what it priced; POST /orders with its
 * `quote_id` is charged that amount instead of a fresh price, once, until `expires_at`.
 */
export interface Quote {
  id: string;
  accountId: string;
  mode: Mode;
  product: Product;
  quantity: number;
  amount: bigint;
  createdAt: number;
  expiresAt: number;
  usedByOrderId: string | null;
}

export const QUOTE_ID = /^quo_[0-9A-Za-z]{1,64}$/;

function quoteFromRow(row: QuoteRow): Quote {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    product: row.product,
    quantity: Number(row.quantity),
    amount: BigInt(row.amount),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedByOrderId: row.used_by_order_id,
  };
}

/**
 * Every GET /quote writes a row; unused quotes are useless an hour after they expire. Every
 * PRUNE_EVERY-th quote of a process deletes those (index quotes_expires), so the table stays
 * bounded by the quote rate of about an hour. Used quotes stay: they record an order's price lock.
 */
const PRUNE_EVERY = 100;
const PRUNE_AFTER_MS = 60 * 60 * 1000;
let savedSincePrune = 0;

export async function saveQuote(
  db: Kysely<Database>,
  input: { accountId: string; mode: Mode; product: Product; quantity: number; amount: bigint; now: number; ttlSeconds: number },
): Promise<Quote> {
  const quote: Quote = {
    id: newId('quo'),
    accountId: input.accountId,
    mode: input.mode,
    product: input.product,
    quantity: input.quantity,
    amount: input.amount,
    createdAt: input.now,
    expiresAt: input.now + input.ttlSeconds * 1000,
    usedByOrderId: null,
  };
  await db
    .insertInto('quotes')
    .values({
      id: quote.id,
      account_id: quote.accountId,
      mode: quote.mode,
      product: quote.product,
      quantity: quote.quantity,
      amount: quote.amount,
      created_at: quote.createdAt,
      expires_at: quote.expiresAt,
      used_by_order_id: null,
    })
    .execute();
  if (++savedSincePrune >= PRUNE_EVERY) {
    savedSincePrune = 0;
    await pruneQuotes(db, input.now);
  }
  return quote;
}

export async function pruneQuotes(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('quotes').where('expires_at', '<', BigInt(now - PRUNE_AFTER_MS)).where('used_by_order_id', 'is', null).execute();
}

const mismatch = (why: string) => new ApiError('quote_mismatch', `${why} Ask GET /quote for a new quote, or send the order without quote_id.`, 'quote_id');
const expired = (quote: Quote) =>
  new ApiError('quote_expired', `Quote ${quote.id} expired at ${new Date(quote.expiresAt).toISOString()}; ask GET /quote for a new one.`, 'quote_id');

/**
 * The quote an order may be priced at, checked in this order: it exists for the key's account
 * and mode, is for the same product and quantity, is not used by another order (all 400
 * quote_mismatch), and has not expired (409 quote_expired).
 */
export async function usableQuote(
  db: Kysely<Database>,
  id: string,
  order: { accountId: string; mode: Mode; product: Product; quantity: number },
  now: number,
): Promise<Quote> {
  const row = QUOTE_ID.test(id)
    ? await db.selectFrom('quotes').selectAll().where('id', '=', id).where('account_id', '=', order.accountId).where('mode', '=', order.mode).executeTakeFirst()
    : undefined;
  if (!row) throw mismatch(`No quote ${id} exists for this account in ${order.mode} mode.`);
  const quote = quoteFromRow(row);
  if (quote.product !== order.product || quote.quantity !== order.quantity) {
    throw mismatch(`Quote ${id} is for ${quote.quantity} ${quote.product}, not ${order.quantity} ${order.product}.`);
  }
  if (quote.usedByOrderId !== null) throw mismatch(`Quote ${id} was already used by order ${quote.usedByOrderId}; a quote prices one order.`);
  if (now >= quote.expiresAt) throw expired(quote);
  return quote;
}

/**
 * Marks the quote used by `orderId`, inside the order's transaction. A concurrent order that
 * took it first, or expiry in between, fails this order (and rolls its transaction back).
 */
export async function claimQuote(tx: Kysely<Database>, quote: Quote, orderId: string, now: number): Promise<void> {
  const result = await tx
    .updateTable('quotes')
    .set({ used_by_order_id: orderId })
    .where('id', '=', quote.id)
    .where('used_by_order_id', 'is', null)
    .where('expires_at', '>', BigInt(now))
    .executeTakeFirst();
  if (result.numUpdatedRows === 1n) return;
  if (now >= quote.expiresAt) throw expired(quote);
  throw mismatch(`Quote ${quote.id} was already used by another order; a quote prices one order.`);
}
