import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import { formatTon } from '../domain/money.js';
import type { Product } from '../domain/products.js';
import { newId } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import { preparedQuery } from '../db/prepared.js';
import { applyMovement, readBalance } from '../ledger/ledger.js';
import type { PriceSource } from '../providers/ports.js';
import { IDEMPOTENCY_WAIT_MS, type IdempotencyGate, keyInUse } from './idempotency-gate.js';
import { type Order, orderFingerprint } from './order.js';
import { appendEvent, findOrderByIdempotencyKey, nextOrderNumber } from './order-store.js';
import { placeInOneStatement, placesInOneStatement } from './place-in-one-statement.js';
import { claimQuote, type Quote, usableQuote } from '../quotes/quotes.js';
import { accountPrice } from '../plans/account-price.js';
import { enqueueBalanceLowEvent } from '../webhooks/outbox.js';
import { balanceLow } from '../notifications/notices.js';

export interface CreateOrderInput {
  accountId: string;
  mode: Mode;
  idempotencyKey: string;
  product: Product;
  /** Without "@", case as supplied. */
  username: string;
  quantity: number;
  externalId: string | null;
  /** GET /quote's id: the order is charged the quoted amount. */
  quoteId?: string | null;
  /** The account's plan when the caller knows it (the API key's verdict; null: none): else looked up to price. */
  planName?: string | null;
}

export interface CreateOrderDeps {
  db: Db;
  prices: PriceSource;
  gate: IdempotencyGate;
  /**
   * Whether live orders can be fulfilled now (fulfiller configured, circuit breaker closed);
   * false answers 503 live_unavailable.
   */
  liveAvailable: () => boolean | Promise<boolean>;
  /** Called after a new order committed (wakes the fulfilment worker). */
  onCreated: (order: Order) => void;
  now?: () => number;
}

export type CreateOrderResult = { order: Order; replayed: boolean };

/**
 * POST /orders after validation (docs/api.md "Order of checks": idempotency replay / conflict →
 * quote checks (quote_mismatch, quote_expired) → live_unavailable → insufficient_balance). Only a request that creates an order binds its
 * key: every failure before the commit leaves no row behind.
 */
export async function createOrder(deps: CreateOrderDeps, input: CreateOrderInput): Promise<CreateOrderResult> {
  const scope = { accountId: input.accountId, mode: input.mode, idempotencyKey: input.idempotencyKey };
  const fingerprint = orderFingerprint(input);
  const replayIfTaken = async () => {
    const existing = await findOrderByIdempotencyKey(deps.db.kysely, scope);
    return existing && replay(existing, fingerprint);
  };
  return deps.gate.run(JSON.stringify(scope), async () => {
    // PostgreSQL, no quote: the key is looked up only once something stands in the way of the
    // one-statement placement (a taken key fails its insert), so a new order costs one round
    // trip. A replay still wins over every later check, as the contract orders them.
    const direct = !input.quoteId && placesInOneStatement(deps.db.kysely);
    if (!direct) {
      const replayed = await replayIfTaken();
      if (replayed) return replayed;
    }
    let priced: { amount: bigint; quote: Quote | undefined };
    try {
      priced = await priceOrder(deps, input);
    } catch (error) {
      const replayed = direct && (await replayIfTaken());
      if (replayed) return replayed;
      throw error;
    }
    const order = pendingOrder(deps, input, fingerprint, priced.amount);
    if (direct) {
      if (await placeDirectly(deps, order)) return created(deps, order);
      // Not placed: a taken key, a balance that does not cover it, or webhooks to write.
      const replayed = await replayIfTaken();
      if (replayed) return replayed;
    }
    try {
      await insertOrder(deps, order, priced.quote);
      return created(deps, order);
    } catch (error) {
      if (deps.db.engine.isLockTimeout(error)) throw keyInUse();
      if (!deps.db.engine.isUniqueViolation(error)) throw error;
      // A concurrent request with the same key (another process) committed first.
      const replayed = await replayIfTaken();
      if (!replayed) throw error;
      return replayed;
    }
  });
}

/** The checks after idempotency (docs/api.md "Order of checks"): quote_mismatch, quote_expired, live_unavailable; then the amount. */
async function priceOrder(deps: CreateOrderDeps, input: CreateOrderInput): Promise<{ amount: bigint; quote: Quote | undefined }> {
  const now = (deps.now ?? Date.now)();
  const quote = input.quoteId ? await usableQuote(deps.db, input.quoteId, input, now) : undefined;
  if (input.mode === 'live' && !(await deps.liveAvailable())) {
    throw new ApiError('live_unavailable');
  }
  // A valid quote locks its price: docs/api.md "GET /quote"'s "can differ slightly" no longer applies.
  // Else the account's price now (its plan's, else PRICE_MARKUP_PERCENT): docs/operations.md "Price plans".
  const amount = quote ? quote.amount : await accountPrice({ db: deps.db.kysely, prices: deps.prices }, input, input.product, input.quantity, now);
  return { amount, quote };
}

function created(deps: CreateOrderDeps, order: Order): CreateOrderResult {
  deps.onCreated(order);
  void deps.db.announceQueued?.();
  return { order, replayed: false };
}

/** placeInOneStatement; false when it placed nothing (the key is taken, or see there). */
async function placeDirectly(deps: CreateOrderDeps, order: Order): Promise<boolean> {
  try {
    return await placeInOneStatement(deps.db.kysely, order, IDEMPOTENCY_WAIT_MS);
  } catch (error) {
    if (deps.db.engine.isLockTimeout(error)) throw keyInUse();
    if (deps.db.engine.isUniqueViolation(error)) return false;
    throw error;
  }
}

function replay(order: Order, fingerprint: string): CreateOrderResult {
  if (order.fingerprint !== fingerprint) {
    throw new ApiError('idempotency_conflict');
  }
  return { order, replayed: true };
}

const insertPendingOrder = preparedQuery(
  (
    db,
    id: string,
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
  ) =>
    db.insertInto('orders').values({
      id,
      account_id: accountId,
      mode,
      idempotency_key: idempotencyKey,
      fingerprint,
      product,
      recipient,
      quantity,
      amount,
      external_id: externalId,
      status: 'fulfillment_pending',
      created_at: now,
      updated_at: now,
      next_run_at: now,
      order_no: nextOrderNumber(db),
    }),
);

function pendingOrder(deps: CreateOrderDeps, input: CreateOrderInput, fingerprint: string, amount: bigint): Order {
  const now = (deps.now ?? Date.now)();
  return {
    id: newId('ord'),
    accountId: input.accountId,
    mode: input.mode,
    idempotencyKey: input.idempotencyKey,
    fingerprint,
    product: input.product,
    recipient: input.username,
    quantity: input.quantity,
    amount,
    externalId: input.externalId,
    status: 'fulfillment_pending',
    failureReason: null,
    createdAt: now,
    updatedAt: now,
    nextRunAt: now,
  };
}

async function insertOrder(deps: CreateOrderDeps, order: Order, quote: Quote | undefined): Promise<void> {
  const { amount, createdAt: now } = order;
  await deps.db.writeTransaction(async (tx) => {
    // Another node's uncommitted insert with this key makes ours wait on the unique index;
    // the contract bounds that wait.
    await deps.db.engine.capLockWait(tx, IDEMPOTENCY_WAIT_MS);
    await insertPendingOrder(
      tx,
      order.id,
      order.accountId,
      order.mode,
      order.idempotencyKey,
      order.fingerprint,
      order.product,
      order.recipient,
      order.quantity,
      amount,
      order.externalId,
      now,
    );
    // After the order row: a concurrent request with the same Idempotency-Key waits on the
    // unique index above and then replays, instead of finding the quote taken.
    if (quote) await claimQuote(tx, quote, order.id, now);
    await appendEvent(tx, { orderId: order.id, type: 'order.created', status: order.status, data: { amount: formatTon(amount) }, now });
    // The reservation comes last: on PostgreSQL it locks the balance row until the commit, and
    // every other order of the account waits for that lock. (A refusal rolls back all of it.)
    const ref = { accountId: order.accountId, mode: order.mode };
    const reserved = await applyMovement(tx, ref, { kind: 'reserve', amount, orderId: order.id, now });
    if (!reserved) {
      const available = (await readBalance(tx, ref))?.available ?? 0n;
      throw new ApiError('insufficient_balance', undefined, 'quantity', {
        available: formatTon(available),
        required: formatTon(amount),
      });
    }
    // Below the account's low-balance threshold with this order: its `balance.low` event.
    await enqueueBalanceLowEvent(tx, reserved);
    await balanceLow(tx, reserved);
  });
}
