import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { storedSecret } from '../accounts/dashboard-secret.js';
import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import type { Product } from '../domain/products.js';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';

/**
 * Price-locked quotes (issue 6). GET /quote answers hot and often, so it writes nothing: the
 * quote id is itself the quote, signed. `quo_` + 62 base62 characters encode 46 bytes:
 *
 *   version (1) | product (1) | quantity (2) | amount in nanotons (8) | expires_at ms (6)
 *   | random nonce (12) | HMAC-SHA256 over those 30 bytes, the account and the mode (16)
 *
 * The nonce makes every id unique (96 random bits, as the contract asks of ids); the MAC binds
 * the quote to the account and mode it was given to, so another account's or a forged id is
 * simply not a quote. POST /orders with a `quote_id` is charged its amount; the order's
 * transaction records the quote in `quotes` (primary key = id), which makes it single-use.
 */
export interface Quote {
  id: string;
  accountId: string;
  mode: Mode;
  product: Product;
  quantity: number;
  amount: bigint;
  expiresAt: number;
}

export const QUOTE_ID = /^quo_[0-9A-Za-z]{1,64}$/;

const VERSION = 1;
const BODY_BYTES = 30;
const MAC_BYTES = 16;
const TOKEN_BYTES = BODY_BYTES + MAC_BYTES;
const TOKEN_CHARS = 62; // 62^62 > 2^368 = 2^(8 × 46)
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PRODUCTS: readonly Product[] = ['stars', 'premium'];

/** The signing key, one per database (shared by every node), read once per process. */
const keys = new WeakMap<Db, Promise<Buffer>>();
export function quoteKey(db: Db): Promise<Buffer> {
  let key = keys.get(db);
  if (!key) {
    key = storedSecret(db, 'quote_hmac_key');
    key.catch(() => keys.delete(db));
    keys.set(db, key);
  }
  return key;
}

export function issueQuote(
  key: Buffer,
  input: { accountId: string; mode: Mode; product: Product; quantity: number; amount: bigint; now: number; ttlSeconds: number },
): Quote {
  const expiresAt = input.now + input.ttlSeconds * 1000;
  const body = Buffer.alloc(BODY_BYTES);
  body.writeUInt8(VERSION, 0);
  body.writeUInt8(PRODUCTS.indexOf(input.product), 1);
  body.writeUInt16BE(input.quantity, 2);
  body.writeBigUInt64BE(input.amount, 4);
  body.writeUIntBE(expiresAt, 12, 6);
  randomBytes(12).copy(body, 18);
  const token = Buffer.concat([body, mac(key, body, input.accountId, input.mode)]);
  const { accountId, mode, product, quantity, amount } = input;
  return { id: `quo_${toBase62(token)}`, accountId, mode, product, quantity, amount, expiresAt };
}

/** The quote an id stands for, if this account and mode were given it (the signature holds). */
function readQuote(key: Buffer, id: string, accountId: string, mode: Mode): Quote | undefined {
  if (!QUOTE_ID.test(id) || id.length !== 4 + TOKEN_CHARS) return undefined;
  const token = fromBase62(id.slice(4));
  if (!token) return undefined;
  const body = token.subarray(0, BODY_BYTES);
  if (!timingSafeEqual(token.subarray(BODY_BYTES), mac(key, body, accountId, mode))) return undefined;
  const product = PRODUCTS[body.readUInt8(1)];
  if (body.readUInt8(0) !== VERSION || !product) return undefined;
  return { id, accountId, mode, product, quantity: body.readUInt16BE(2), amount: body.readBigUInt64BE(4), expiresAt: body.readUIntBE(12, 6) };
}

function mac(key: Buffer, body: Buffer, accountId: string, mode: Mode): Buffer {
  return createHmac('sha256', key).update(body).update(`\0${accountId}\0${mode}`).digest().subarray(0, MAC_BYTES);
}

function toBase62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  for (let i = 0; i < TOKEN_CHARS; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

function fromBase62(text: string): Buffer | undefined {
  let n = 0n;
  for (const char of text) n = n * 62n + BigInt(BASE62.indexOf(char));
  const hex = n.toString(16).padStart(TOKEN_BYTES * 2, '0');
  return hex.length === TOKEN_BYTES * 2 ? Buffer.from(hex, 'hex') : undefined;
}

const mismatch = (why: string) => new ApiError('quote_mismatch', `${why} Ask GET /quote for a new quote, or send the order without quote_id.`, 'quote_id');
const expired = (quote: Quote) =>
  new ApiError('quote_expired', `Quote ${quote.id} expired at ${new Date(quote.expiresAt).toISOString()}; ask GET /quote for a new one.`, 'quote_id');

/**
 * The quote an order may be priced at, checked in this order: it was given to the key's
 * account and mode, is for the same product and quantity, is not used by another order (all
 * 400 quote_mismatch), and has not expired (409 quote_expired).
 */
export async function usableQuote(
  db: Db,
  id: string,
  order: { accountId: string; mode: Mode; product: Product; quantity: number },
  now: number,
): Promise<Quote> {
  const quote = readQuote(await quoteKey(db), id, order.accountId, order.mode);
  if (!quote) throw mismatch(`No quote ${id} exists for this account in ${order.mode} mode.`);
  if (quote.product !== order.product || quote.quantity !== order.quantity) {
    throw mismatch(`Quote ${id} is for ${quote.quantity} ${quote.product}, not ${order.quantity} ${order.product}.`);
  }
  const used = await db.kysely.selectFrom('quotes').select('used_by_order_id').where('id', '=', id).executeTakeFirst();
  if (used) throw mismatch(`Quote ${id} was already used by order ${used.used_by_order_id}; a quote prices one order.`);
  if (now >= quote.expiresAt) throw expired(quote);
  return quote;
}

/**
 * Records the quote as used by `orderId`, inside the order's transaction. A concurrent order
 * that took it first, or expiry in between, fails this order (and rolls its transaction back).
 */
export async function claimQuote(tx: Kysely<Database>, quote: Quote, orderId: string, now: number): Promise<void> {
  if (now >= quote.expiresAt) throw expired(quote);
  const result = await tx
    .insertInto('quotes')
    .values({
      id: quote.id,
      account_id: quote.accountId,
      mode: quote.mode,
      product: quote.product,
      quantity: quote.quantity,
      amount: quote.amount,
      created_at: now,
      expires_at: quote.expiresAt,
      used_by_order_id: orderId,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (result.numInsertedOrUpdatedRows !== 1n) throw mismatch(`Quote ${quote.id} was already used by another order; a quote prices one order.`);
}
