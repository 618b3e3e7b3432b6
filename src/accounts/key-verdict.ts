import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { Database } from '../db/schema.js';

/**
 * `unverified`: no owner of the account has verified an address yet (SIGNUP_VERIFY=required refuses its live key).
 * `planName`: the account's price plan, null on the global PRICE_MARKUP_PERCENT; read with the key so
 * that pricing an account without a plan, the common case, costs no query of its own (account-price.ts).
 */
export type Authentication =
  | { ok: true; accountId: string; mode: Mode; keyId: string; unverified: boolean; planName: string | null }
  | { ok: false; code: 'invalid_api_key' | 'api_key_revoked' | 'account_disabled' };

/**
 * What a key's verdict is read from: its row, its account's status and plan, under names that can
 * sit beside a route's own columns when a route reads its data in the same statement (auth.ts
 * Prefetch). Select them from keyVerdictSource.
 */
export const KEY_VERDICT_COLUMNS = [
  'k.id as key_id',
  'k.account_id as key_account_id',
  'k.mode as key_mode',
  'k.revoked_at as key_revoked_at',
  'a.status as account_status',
  'a.unverified_since as account_unverified_since',
  'ap.plan_name as account_plan_name',
] as const;

/**
 * The tables KEY_VERDICT_COLUMNS are selected from: the key, its account and the account's plan,
 * if any (a statement with its own CTEs joins the same three itself: order-store.ts).
 */
export function keyVerdictSource(db: Kysely<Database>) {
  return db.selectFrom('api_keys as k').innerJoin('accounts as a', 'a.id', 'k.account_id').leftJoin('account_plans as ap', 'ap.account_id', 'k.account_id');
}

export interface KeyVerdictRow {
  key_id: string;
  key_account_id: string;
  key_mode: Mode;
  key_revoked_at: number | string | bigint | null;
  account_status: string;
  account_unverified_since: number | string | bigint | null;
  account_plan_name: string | null;
}

/** The verdict on a key from its row, or on a key no row has (`undefined`). */
export function authenticationOf(row: KeyVerdictRow | undefined): Authentication {
  if (!row) return { ok: false, code: 'invalid_api_key' };
  if (row.key_revoked_at !== null) return { ok: false, code: 'api_key_revoked' };
  if (row.account_status !== 'active') return { ok: false, code: 'account_disabled' };
  return {
    ok: true,
    accountId: row.key_account_id,
    mode: row.key_mode,
    keyId: row.key_id,
    unverified: row.account_unverified_since !== null,
    planName: row.account_plan_name,
  };
}
