import type { Generated } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Live fulfilment: settings, the circuit breaker, Fragment payments and the paying wallet (migrations 0007, 0008, 0011). */

/** Operator-set values every process reads on its next call (migration 0007-live). */
export interface LiveSettingsTable {
  name: string;
  /** May be a secret (the Fragment session): never logged or printed. */
  value: string;
  updated_at: Int;
}

/** The live upstream's circuit breaker, shared by every process. */
export interface LiveBreakerTable {
  name: string;
  state: 'closed' | 'open';
  reason: string | null;
  message: string | null;
  failures: Generated<bigint>;
  opened_at: NullableInt;
  retry_at: NullableInt;
  probe_until: NullableInt;
  updated_at: Int;
  /** The operator's maintenance pause (0025-live-operator-pause): set and cleared only by the operator. */
  paused_reason: string | null;
  paused_by: string | null;
  paused_at: NullableInt;
}

/** The payment request Fragment issued for a live order. */
export interface LivePaymentsTable {
  order_id: string;
  fragment_req_id: string;
  recipient_name: string | null;
  quoted_amount: Int;
  destination: string;
  amount: Int;
  /** base64url BOC exactly as Fragment sent it. */
  payload: string;
  /** Epoch milliseconds. */
  valid_until: Int;
  created_at: Int;
  updated_at: Int;
}

/** The per-wallet lock row (migration 0008-wallet). */
export interface WalletStateTable {
  address: string;
  locked_at: Int;
}

export type WalletMessageState = 'signed' | 'broadcast' | 'confirmed' | 'expired' | 'held';

/** A signed external message of the paying wallet, stored before broadcast (0008-wallet). */
export interface WalletMessagesTable {
  hash: string;
  wallet: string;
  seqno: Int;
  valid_until: Int;
  boc: string;
  state: WalletMessageState;
  total: Int;
  tx_hash: string | null;
  tx_lt: string | null;
  broadcasts: Generated<bigint>;
  last_broadcast_at: Int | null;
  checked_at: Int | null;
  created_at: Int;
  resolved_at: Int | null;
  updated_at: Int;
}

/** An order paid by a wallet message (0008-wallet). */
export interface WalletMessageOrdersTable {
  message_hash: string;
  order_id: string;
  destination: string;
  amount: Int;
  body_hash: string;
  outcome: 'pending' | 'paid' | 'unpaid' | 'held';
}
