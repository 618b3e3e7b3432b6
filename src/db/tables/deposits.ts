import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Deposits to the deposit wallet, its cursor and walks, and jetton wallets (migrations 0005, 0009, 0010, 0016). */

/** An incoming transfer to the deposit wallet (migration 0005-deposits). */
export interface DepositsTable {
  id: string;
  tx_hash: string;
  lt: Int;
  address: string;
  sender: string;
  amount: Int;
  comment: string | null;
  /**
   * `returned` (migration 0010-deposit-returns): the operator sent the TON back by hand.
   * `awaiting_rate`, `ignored` (migration 0016-usdt-deposits): a matched USDT deposit waiting
   * for a fresh rate; a notification from a jetton wallet that is not ours.
   */
  status: 'credited' | 'unmatched' | 'returned' | 'awaiting_rate' | 'ignored';
  reason: 'no_comment' | 'memo_invalid' | 'memo_unknown' | 'below_minimum' | 'unknown_jetton' | null;
  account_id: string | null;
  chain_time: Int;
  created_at: Int;
  credited_at: NullableInt;
  credited_by: 'watcher' | 'operator' | null;
  /** Set exactly when status is `returned`. */
  returned_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Migration 0016-usdt-deposits. */
  asset: ColumnType<'TON' | 'USDT' | 'jetton', 'TON' | 'USDT' | 'jetton' | undefined, 'TON' | 'USDT' | 'jetton'>;
  /** Token units (USDT: 6 decimals); text on SQLite, numeric on PostgreSQL. */
  jetton_amount: ColumnType<string | null, string | null | undefined, string | null>;
  jetton_wallet: ColumnType<string | null, string | null | undefined, string | null>;
  /** USD per TON, exact decimal text. */
  rate: ColumnType<string | null, string | null | undefined, string | null>;
  rate_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

/** The deposit wallet's jetton wallet per master (migration 0016-usdt-deposits). */
export interface JettonWalletsTable {
  owner: string;
  master: string;
  wallet: string;
  computed_at: Int;
}

export interface DepositCursorsTable {
  address: string;
  lt: Int;
  hash: string;
  chain_time: Int;
  checked_at: Int;
}

/** A backlog walk in progress, at most one per deposit wallet (migration 0009-deposit-walks). */
export interface DepositWalksTable {
  address: string;
  top_lt: Int;
  top_hash: string;
  top_chain_time: Int;
  resume_lt: Int;
  resume_hash: string;
  started_at: Int;
  updated_at: Int;
}
