import { Address } from '@ton/core';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.js';
import { ToncenterError } from '../../ton/toncenter.js';
import type { Order } from '../../orders/order.js';
import type { CircuitBreaker } from '../breaker.js';
import type { PaymentProgress, PaymentSender, StoredPayment } from '../payment-sender.js';
import type { WalletAccountState, WalletChain } from './chain.js';
import { payloadCell, type SigningWallet } from './signing-wallet.js';
import {
  claimCheck,
  dropPaymentRequest,
  findMessage,
  hasOpenLink,
  highestUsedSeqno,
  inFlightMessages,
  insertMessage,
  latestLink,
  lockWallet,
  markBroadcast,
  payableOrders,
  resolveConfirmed,
  resolveUnconfirmed,
  type StoredMessage,
  wake,
} from './wallet-store.js';
import { walletCover } from '../../notifications/notices.js';

export interface WalletSenderOptions {
  db: Kysely<Database>;
  wallet: SigningWallet;
  chain: WalletChain;
  breaker: CircuitBreaker;
  logger: Logger;
  /** Most orders paid by one transfer (capped by the contract: V5R1 255, V4 4). */
  batchMax: number;
  /** A signed message is valid this long at most (shorter when Fragment's invoice ends first). */
  messageTtlMs: number;
  /** Unconfirmed this long after valid_until although the seqno moved → held for review. */
  confirmMarginMs: number;
  /** How often an in-flight message is looked up on chain. */
  pollMs: number;
  /** How often the same signed message is broadcast again while it may still land. */
  rebroadcastMs: number;
  /** Fees allowed per message; with the tolerance: the money-safety re-check at signing. */
  feeAllowance: bigint;
  withinReserve: (amount: bigint, reserved: bigint) => boolean;
  /** Below this balance (after the batch) the wallet is short of TON: live fulfilment pauses. */
  minBalance: bigint;
  /**
   * The operator is warned when what the wallet can spend after a batch is below `nanotons`, or
   * below `orders` payments the size of this batch's largest (docs/operations.md
   * "Notifications"; 0 turns either off).
   */
  lowWarning?: { nanotons: bigint; orders: number };
  hooks?: WalletHooks;
}

export interface WalletHooks {
  onSent?: (orders: number) => void;
  onConfirmed?: (orders: number, latencySeconds: number) => void;
  onHeld?: (orders: number) => void;
}

/** An invoice with less than this left is not signed for: re-initialised instead. */
const MIN_INVOICE_LEFT_MS = 15_000;
/** Other orders join a batch only with this much invoice left, so they do not shorten it much. */
const MIN_BATCH_LEFT_MS = 60_000;
/** After toncenter failed, the order is looked at again this much later. */
const CHAIN_RETRY_MS = 5_000;
/** Chain clocks and node views lag a little: expiry is judged this long after valid_until. */
const EXPIRY_GRACE_MS = 5_000;

/**
 * The paying wallet (docs/upstreams.md "Paying wallet") behind the live step's PaymentSender port. Per order:
 *
 * - Its latest wallet message decides: paid → delivered; pending → look the message up on
 *   chain by its normalized hash, re-broadcast the same stored BOC while it is valid, and at
 *   expiry let the on-chain seqno decide (unchanged → it never landed: unpaid; moved without
 *   our transaction → held for review); held → waits for the operator; unpaid or none → sign.
 * - Signing happens under the wallet's database lock, with nothing else in flight for the
 *   wallet, a seqno above every one already used, and the message committed before it is
 *   broadcast (write-ahead). One transfer pays this order and up to batchMax − 1 other ready
 *   ones; each is confirmed by its own out message.
 */
export class WalletPaymentSender implements PaymentSender {
  private readonly address: string;

  constructor(private readonly options: WalletSenderOptions) {
    this.address = options.wallet.address.toRawString();
  }

  async pay(order: Order, payment: StoredPayment, now: number): Promise<PaymentProgress> {
    try {
      return await this.payOrWait(order, payment, now);
    } catch (error) {
      if (!(error instanceof ToncenterError)) throw error;
      // The chain cannot be read or written now: nothing is decided without it; look again later.
      this.options.logger.warn({ order_id: order.id, err: { message: error.message } }, 'wallet: toncenter unavailable, payment waits');
      return { kind: 'waiting', checkAt: now + CHAIN_RETRY_MS };
    }
  }

  private async payOrWait(order: Order, payment: StoredPayment, now: number): Promise<PaymentProgress> {
    const latest = await latestLink(this.options.db, order.id);
    if (latest && latest.link.outcome === 'pending') await this.progress(latest.message, now);
    const current = latest && latest.link.outcome === 'pending' ? await latestLink(this.options.db, order.id) : latest;
    switch (current?.link.outcome) {
      case 'paid':
        return { kind: 'delivered' };
      case 'held':
        return { kind: 'waiting', checkAt: null };
      case 'pending':
        return { kind: 'waiting', checkAt: this.nextCheck(current.message, now) };
      default:
        return this.sign(order, payment, now);
    }
  }

  /** When to look at an in-flight message again. */
  private nextCheck(message: StoredMessage, now: number): number {
    if (now < message.validUntil + EXPIRY_GRACE_MS) return now + this.options.pollMs;
    return now + Math.max(this.options.pollMs, 5_000);
  }

  /** Moves an in-flight message on: confirm, re-broadcast, expire or hold. Idempotent, shared. */
  async progress(message: StoredMessage, now: number): Promise<void> {
    const { db, chain, logger } = this.options;
    if (message.state !== 'signed' && message.state !== 'broadcast') return;
    if (!(await claimCheck(db, message.hash, now, Math.floor(this.options.pollMs / 2)))) return;
    const found = await chain.findByHash(message.hash, Math.floor(message.createdAt / 1000) - 60);
    if (found) {
      const result = await resolveConfirmed(db, message, found, now);
      if (result) {
        this.options.hooks?.onConfirmed?.(result.paid.length, (now - message.createdAt) / 1000);
        if (result.unpaid.length > 0)
          logger.warn({ message: message.hash, unpaid: result.unpaid }, 'wallet transfer confirmed without some of its messages; those orders will be paid anew');
        logger.info({ message: message.hash, tx_hash: found.hash, paid: result.paid.length }, 'wallet transfer confirmed');
      }
      return;
    }
    if (now < message.validUntil) {
      if (message.state === 'signed' || (message.lastBroadcastAt ?? 0) <= now - this.options.rebroadcastMs) await this.broadcast(message, now);
      return;
    }
    if (now < message.validUntil + EXPIRY_GRACE_MS) return;
    const state = await chain.state();
    if (state.seqno === message.seqno) {
      // valid_until has passed and the wallet still expects this seqno: it can never land.
      const orders = await resolveUnconfirmed(db, message, 'expired', now);
      if (orders) logger.warn({ message: message.hash, seqno: message.seqno, orders: orders.length }, 'wallet message expired unsent; its orders will be paid anew');
      return;
    }
    if (now < message.validUntil + this.options.confirmMarginMs) return;
    // The seqno moved but our transaction cannot be found: it may have paid. Never pay again.
    const orders = await resolveUnconfirmed(db, message, 'held', now);
    if (orders) {
      this.options.hooks?.onHeld?.(orders.length);
      logger.error(
        { message: message.hash, seqno: message.seqno, chain_seqno: state.seqno, orders },
        'wallet message unconfirmed after valid_until: orders held for review (bin/starport order resolve)',
      );
    }
  }

  private async broadcast(message: StoredMessage, now: number): Promise<void> {
    try {
      await this.options.chain.broadcast(message.boc);
    } catch (error) {
      // A refusal (e.g. already applied, seqno moved) or an outage: the chain look-up decides.
      this.options.logger.warn({ message: message.hash, err: { message: (error as Error).message } }, 'wallet message broadcast failed; will look it up and retry');
    }
    await markBroadcast(this.options.db, message.hash, now);
  }

  private async sign(order: Order, payment: StoredPayment, now: number): Promise<PaymentProgress> {
    const { db, breaker, logger } = this.options;
    if (!this.options.withinReserve(payment.amount, order.amount)) {
      return { kind: 'failed', reason: 'price_moved', message: 'The amount to pay no longer fits the reserved amount; nothing was paid and the amount was released.' };
    }
    const inFlight = (await inFlightMessages(db, this.address))[0];
    if (inFlight) {
      // One message in flight per wallet: move it on; this order joins the next batch.
      await this.progress(inFlight, now);
      return { kind: 'waiting', checkAt: now + this.options.pollMs };
    }
    if (payment.validUntil - now < MIN_INVOICE_LEFT_MS) {
      const dropped = await db.transaction().execute(async (tx) => {
        await lockWallet(tx, this.address, now);
        return dropPaymentRequest(tx, order.id);
      });
      if (dropped) return { kind: 'reinit' };
      return { kind: 'waiting', checkAt: now + this.options.pollMs };
    }
    // Chain reads happen outside the lock; the checks under it make a stale read harmless.
    const chainState = await this.options.chain.state();
    const outcome = await db.transaction().execute((tx) => this.signUnderLock(tx, order, payment, chainState, now));
    if (outcome.kind === 'short') {
      await breaker.open('need_ton', `the paying wallet holds ${chainState.balance} nanotons, too little for the next payment (WALLET_MIN_BALANCE_TON)`, now);
      return { kind: 'waiting', checkAt: now + 30_000 };
    }
    if (outcome.kind === 'busy') return { kind: 'waiting', checkAt: now + this.options.pollMs };
    const message = (await findMessage(db, outcome.hash)) as StoredMessage;
    this.options.hooks?.onSent?.(outcome.orders.length);
    logger.info({ message: message.hash, seqno: message.seqno, orders: outcome.orders.length }, 'wallet transfer signed and stored; broadcasting');
    await this.broadcast(message, now);
    await wake(
      db,
      outcome.orders.filter((id) => id !== order.id),
      now + this.options.pollMs,
    );
    return { kind: 'waiting', checkAt: now + this.options.pollMs };
  }

  /** The paying wallet's cover, as an operator incident (opened once, resolved once). */
  private async warnWhenLow(tx: Kysely<Database>, left: bigint, batch: Array<{ amount: bigint }>, now: number): Promise<void> {
    const warning = this.options.lowWarning;
    if (!warning || (warning.nanotons === 0n && warning.orders === 0)) return;
    // bigint: no Math.max.
    let largest = 0n;
    for (const payment of batch) if (payment.amount > largest) largest = payment.amount;
    largest += this.options.feeAllowance;
    const low = (warning.nanotons > 0n && left < warning.nanotons) || (warning.orders > 0 && left < largest * BigInt(warning.orders));
    await walletCover(tx, low, left, now);
  }

  private async signUnderLock(
    tx: Kysely<Database>,
    order: Order,
    payment: StoredPayment,
    chainState: WalletAccountState,
    now: number,
  ): Promise<{ kind: 'busy' } | { kind: 'short' } | { kind: 'signed'; hash: string; orders: string[] }> {
    const { wallet } = this.options;
    await lockWallet(tx, this.address, now);
    // Re-read under the lock: another process may have signed since we looked.
    if ((await inFlightMessages(tx, this.address)).length > 0 || (await hasOpenLink(tx, order.id))) return { kind: 'busy' };
    // The chain must already show every seqno we used as spent; otherwise its view lags.
    const used = await highestUsedSeqno(tx, this.address);
    if (used !== undefined && chainState.seqno <= used) return { kind: 'busy' };
    const cap = Math.min(this.options.batchMax, wallet.maxMessages);
    const others = (await payableOrders(tx, { validAfter: now + MIN_BATCH_LEFT_MS, limit: cap - 1, exclude: order.id })).filter((o) =>
      this.options.withinReserve(o.amount, o.reserved),
    );
    const batch = [{ orderId: order.id, destination: payment.destination, amount: payment.amount, payload: payment.payload, validUntil: payment.validUntil }, ...others];
    // Pay as many as the balance allows, this order first; none → the wallet is short of TON.
    let spendable = chainState.balance - this.options.minBalance;
    const affordable = batch.filter((p) => {
      const cost = p.amount + this.options.feeAllowance;
      if (cost > spendable) return false;
      spendable -= cost;
      return true;
    });
    if (affordable[0]?.orderId !== order.id) return { kind: 'short' };
    await this.warnWhenLow(tx, spendable, affordable, now);
    const validUntil = Math.floor(Math.min(now + this.options.messageTtlMs, ...affordable.map((p) => p.validUntil)) / 1000);
    const signed = wallet.sign({ seqno: chainState.seqno, validUntil, payments: affordable, deploy: !chainState.active });
    await insertMessage(
      tx,
      { hash: signed.hash, wallet: this.address, seqno: signed.seqno, validUntil: validUntil * 1000, boc: signed.boc, total: affordable.reduce((s, p) => s + p.amount, 0n), now },
      affordable.map((p) => ({ orderId: p.orderId, destination: rawDestination(p.destination), amount: p.amount, bodyHash: payloadCell(p.payload).hash().toString('hex') })),
    );
    return { kind: 'signed', hash: signed.hash, orders: affordable.map((p) => p.orderId) };
  }
}

/** Destinations are compared in raw form (Fragment sends a friendly one, the chain shows raw). */
function rawDestination(address: string): string {
  return Address.parse(address).toRawString();
}
