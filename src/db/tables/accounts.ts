import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Accounts and their API keys (migrations 0001, 0004, 0019, 0022). */

export interface AccountsTable {
  id: string;
  email: string;
  status: 'active' | 'disabled';
  created_at: Int;
  /** Set when an owner turned on "require two-factor" for every member (migration 0019). */
  two_factor_required_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Set while no owner has verified an address since sign-up (migration 0022). */
  unverified_since: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  key_hash: string;
  display_prefix: string;
  created_at: Int;
  revoked_at: NullableInt;
}
