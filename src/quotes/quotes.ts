import { hash, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import { storedSecret } from '../accounts/dashboard-secret.js';
import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import type { Product } from '../domain/products.js';
import { BASE62, BASE62_CODES, fillRandom, isPublicId } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';

/**
 * Price-locked quotes. GET /quote answers hot and often, so it writes nothing: the
 * quote id is itself the quote, signed. `quo_` + 63 base62 characters encode 45 bytes:
 *
 *   version (1) | product (1) | quantity (2) | amount in nanotons (7) | expires_at ms (6)
 *   | random nonce (12) | HMAC-SHA256 over those 29 bytes, the account and the mode (16)
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

const VERSION = 1;
const BODY_BYTES = 29;
const MAC_BYTES = 16;
const TOKEN_BYTES = BODY_BYTES + MAC_BYTES;
// Base62 in groups of 5 bytes → 7 characters (62^7 > 2^40), in plain Number arithmetic: a
// BigInt conversion of the whole token cost more than the rest of GET /quote.
const GROUP_BYTES = 5;
const GROUP_CHARS = 7;
const TOKEN_CHARS = (TOKEN_BYTES / GROUP_BYTES) * GROUP_CHARS; // 63
const MAX_AMOUNT = 2n ** 56n; // 72 million TON
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

export function issueQuote(key: Buffer, input: { accountId: string; mode: Mode; product: Product; quantity: number; amount: bigint; now: number; ttlSeconds: number }): Quote {
  const expiresAt = input.now + input.ttlSeconds * 1000;
  if (input.amount < 0n || input.amount >= MAX_AMOUNT) throw new Error(`a quote cannot carry ${input.amount} nanotons`);
  // Every byte is written below: the body, then the MAC.
  const token = Buffer.allocUnsafe(TOKEN_BYTES);
  token[0] = VERSION;
  token[1] = PRODUCTS.indexOf(input.product);
  token.writeUInt16BE(input.quantity, 2);
  token[4] = Number(input.amount >> 48n);
  writeUInt48BE(token, Number(input.amount & 0xffffffffffffn), 5);
  writeUInt48BE(token, expiresAt, 11);
  // From the shared pool: a CSPRNG call per quote cost a seventh of GET /quote.
  fillRandom(token, 17, 12);
  mac(key, token, input.accountId, input.mode, token, BODY_BYTES);
  const { accountId, mode, product, quantity, amount } = input;
  return { id: `quo_${toBase62(token)}`, accountId, mode, product, quantity, amount, expiresAt };
}

/** Buffer's writeUIntBE for 6 bytes, in two fixed-size writes (it is several times slower). */
function writeUInt48BE(target: Buffer, value: number, at: number): void {
  target.writeUInt16BE(Math.floor(value / 2 ** 32), at);
  target.writeUInt32BE(value % 2 ** 32, at + 2);
}

/** The quote an id stands for, if this account and mode were given it (the signature holds). */
export function readQuote(key: Buffer, id: string, accountId: string, mode: Mode): Quote | undefined {
  if (id.length !== 4 + TOKEN_CHARS || !isPublicId('quo', id)) return undefined;
  const token = fromBase62(id.slice(4));
  if (!token) return undefined;
  const body = token.subarray(0, BODY_BYTES);
  const expected = Buffer.allocUnsafe(MAC_BYTES);
  mac(key, body, accountId, mode, expected, 0);
  if (!timingSafeEqual(token.subarray(BODY_BYTES), expected)) return undefined;
  const product = PRODUCTS[body.readUInt8(1)];
  if (body.readUInt8(0) !== VERSION || !product) return undefined;
  const amount = (BigInt(body.readUInt8(4)) << 48n) | BigInt(body.readUIntBE(5, 6));
  return { id, accountId, mode, product, quantity: body.readUInt16BE(2), amount, expiresAt: body.readUIntBE(11, 6) };
}

/**
 * HMAC-SHA256 (RFC 2104) by its definition, H((K ⊕ opad) ‖ H((K ⊕ ipad) ‖ m)), in two calls of
 * Node's one-shot hash over buffers that hold the padded key once per key; its first 16 bytes
 * are written to `target` at `at`. m is the body, then `\0account\0mode`. Why not createHmac:
 * it made a JavaScript object and an OpenSSL context per call, and under load GET /quote cost
 * 53 µs of CPU with it against 38 µs without (docs/performance-history.md, "Eleventh round"). Why
 * 'binary' (latin1) digests: a string of 32 one-byte characters is cheaper to make than a
 * Buffer. A test checks the result against createHmac.
 */
const BLOCK_BYTES = 64; // SHA-256's block; a longer key would have to be hashed first
interface MacPads {
  inner: Buffer; // K ⊕ ipad, then room for m
  outer: Buffer; // K ⊕ opad, then the inner digest
}
const pads = new WeakMap<Buffer, MacPads>();

function padsOf(key: Buffer): MacPads {
  let found = pads.get(key);
  if (!found) {
    if (key.length > BLOCK_BYTES) throw new Error('a quote key is at most one SHA-256 block');
    found = { inner: Buffer.alloc(BLOCK_BYTES + BODY_BYTES + 128, 0x36), outer: Buffer.alloc(BLOCK_BYTES + 32, 0x5c) };
    for (let i = 0; i < key.length; i++) {
      found.inner[i]! ^= key[i]!;
      found.outer[i]! ^= key[i]!;
    }
    pads.set(key, found);
  }
  return found;
}

function mac(key: Buffer, body: Buffer, accountId: string, mode: Mode, target: Buffer, at: number): void {
  const { inner, outer } = padsOf(key);
  const suffix = `\0${accountId}\0${mode}`;
  const end = BLOCK_BYTES + BODY_BYTES + Buffer.byteLength(suffix);
  const input = end <= inner.length ? inner : Buffer.concat([inner.subarray(0, BLOCK_BYTES)], end);
  body.copy(input, BLOCK_BYTES, 0, BODY_BYTES);
  input.write(suffix, BLOCK_BYTES + BODY_BYTES);
  outer.write(hash('sha256', input.subarray(0, end), 'binary'), BLOCK_BYTES, 'latin1');
  target.write(hash('sha256', outer, 'binary'), at, MAC_BYTES, 'latin1');
}

/**
 * A token's 63 characters, written as ASCII bytes and decoded once rather than built one at a
 * time. Each 40-bit group is held as two 20-bit halves, so that every division stays on small
 * integers: on the whole number V8 divides doubles, which took twice as long.
 */
function toBase62(token: Buffer): string {
  const text = Buffer.allocUnsafe(TOKEN_CHARS);
  for (let group = 0; group < TOKEN_BYTES / GROUP_BYTES; group++) {
    const at = group * GROUP_BYTES;
    let high = (token[at]! << 12) | (token[at + 1]! << 4) | (token[at + 2]! >> 4);
    let low = ((token[at + 2]! & 0x0f) << 16) | (token[at + 3]! << 8) | token[at + 4]!;
    for (let i = (group + 1) * GROUP_CHARS - 1; i >= group * GROUP_CHARS; i--) {
      // (high * 2^20 + low) divided by 62: the high half first, its remainder carried down.
      const highRest = high % 62;
      high = (high - highRest) / 62;
      const carried = highRest * 2 ** 20 + low;
      const digit = carried % 62;
      low = (carried - digit) / 62;
      text[i] = BASE62_CODES[digit]!;
    }
  }
  return text.toString('latin1');
}

function fromBase62(text: string): Buffer | undefined {
  const bytes = Buffer.alloc(TOKEN_BYTES);
  for (let group = 0; group < TOKEN_BYTES / GROUP_BYTES; group++) {
    let n = 0;
    for (const char of text.slice(group * GROUP_CHARS, (group + 1) * GROUP_CHARS)) n = n * 62 + BASE62.indexOf(char);
    if (n >= 2 ** 40) return undefined;
    bytes.writeUInt8(Math.floor(n / 2 ** 32), group * GROUP_BYTES);
    bytes.writeUInt32BE(n % 2 ** 32, group * GROUP_BYTES + 1);
  }
  return bytes;
}

const mismatch = (why: string) => new ApiError('quote_mismatch', `${why} Ask GET /quote for a new quote, or send the order without quote_id.`, 'quote_id');
const expired = (quote: Quote) =>
  new ApiError('quote_expired', `Quote ${quote.id} expired at ${new Date(quote.expiresAt).toISOString()}; ask GET /quote for a new one.`, 'quote_id');

/**
 * The quote an order may be priced at, checked in this order: it was given to the key's
 * account and mode, is for the same product and quantity, is not used by another order (all
 * 400 quote_mismatch), and has not expired (409 quote_expired).
 */
export async function usableQuote(db: Db, id: string, order: { accountId: string; mode: Mode; product: Product; quantity: number }, now: number): Promise<Quote> {
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
