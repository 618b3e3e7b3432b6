import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Balances, the journal and the per-day balance rollup (migrations 0001, 0014, 0017, 0018). */

export interface BalancesTable {
  account_id: string;
  mode: 'live' | 'test';
  available: Int;
  reserved: Int;
  /** The `seq` of the balance's last journal row (bumped by the movement's own UPDATE). */
  journal_seq: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  /** The low-balance alert's threshold (nanotons), null when none is set (src/ledger/low-balance.ts). */
  low_balance_threshold: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

/** Per account, mode and UTC day: the net change of the available balance (migration 0018; src/ledger/balance-days.ts). */
export interface BalanceDaysTable {
  account_id: string;
  mode: 'live' | 'test';
  /** `created_at / 86400000` of the movements summed. */
  day: Int;
  available_net: Int;
}

export interface JournalTable {
  /** `jrn_` + 22 random base62 + the seq (src/ledger/entry-id.ts); no index covers every id. */
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  kind: 'deposit' | 'adjustment' | 'reserve' | 'debit' | 'release';
  order_id: string | null;
  /** The order's `order_no` (the index of an order's movements); null without an order. */
  order_no: NullableInt;
  available_delta: Int;
  reserved_delta: Int;
  reason: string | null;
  created_at: Int;
  /** Per account and mode: 1, 2, 3… in the order the movements were applied. */
  seq: Int;
  /** The balance right after this movement. */
  balance_available: Int;
  balance_reserved: Int;
}
