import type { FailureReason } from '../domain/order-status.js';
import type { Order } from '../orders/order.js';

/**
 * The payment request Fragment issued for a live order, as stored in live_payments before
 * anything is paid.
 */
export interface StoredPayment {
  orderId: string;
  fragmentReqId: string;
  recipientName: string | null;
  /** What init quoted (nanotons). */
  quotedAmount: bigint;
  /** Where to pay: the address Fragment returned, as it returned it. */
  destination: string;
  /** What to pay (nanotons). */
  amount: bigint;
  /** Fragment's payload BOC, base64url, exactly as received: the message body, unchanged. */
  payload: string;
  /** Epoch milliseconds: the invoice's hard deadline (Fragment's validUntil). */
  validUntil: number;
  createdAt: number;
}

/** Where paying an order stands, as the paying side reports it to the live step. */
export type PaymentProgress =
  /** Not paid or not confirmed yet: look again at `checkAt` (epoch ms; null = only when woken). */
  | { kind: 'waiting'; checkAt: number | null }
  /** The order's own outgoing message is confirmed on chain: the order is delivered. */
  | { kind: 'delivered' }
  /** Nothing was or can be paid and the order must not be: fail it (the reserve is released). */
  | { kind: 'failed'; reason: FailureReason; message: string }
  /**
   * The invoice expired with nothing signed that can still land: the stored payment request was
   * dropped, and the Fragment step asks for a new one.
   */
  | { kind: 'reinit' };

/**
 * The paying side of live fulfilment (the TON wallet). The live step calls it
 * with the stored payment request every time the order is due, until it reports delivered. An
 * implementation must be idempotent per order: called again after a crash, it resumes from what
 * it stored and never signs a second payment.
 */
export interface PaymentSender {
  pay(order: Order, payment: StoredPayment, now: number): Promise<PaymentProgress>;
}

/**
 * Until a wallet sender is configured, a payment request is stored and the order waits in
 * processing: nothing is signed or sent. It is looked at again every `recheckMs`, so that a
 * sender configured later picks it up, and the operator can resolve it by hand meanwhile.
 */
export class WaitingPaymentSender implements PaymentSender {
  constructor(private readonly recheckMs = 60_000) {}

  async pay(_order: Order, _payment: StoredPayment, now: number): Promise<PaymentProgress> {
    return { kind: 'waiting', checkAt: now + this.recheckMs };
  }
}
