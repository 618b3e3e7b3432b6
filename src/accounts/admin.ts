import { type Kysely, type Selectable, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { Db } from '../db/engine.js';
import type { AccountsTable, Database } from '../db/schema.js';
import { AccountError, normalizeEmail } from './accounts.js';
import { apiKeyChanged } from '../notifications/notices.js';

/**
 * The operator's view of accounts and keys (CLI `account …`, `key revoke`). Nothing here
 * deletes: an account is disabled (its keys answer 401 account_disabled, its dashboard login is
 * refused) and a key is revoked (revoked_at set), both reversible or traceable.
 */
export type AccountStatus = 'active' | 'disabled';

export interface AccountSummary {
  id: string;
  email: string;
  status: AccountStatus;
  createdAt: number;
  balances: Record<Mode, { available: bigint; reserved: bigint }>;
}

export interface KeyInfo {
  id: string;
  mode: Mode;
  /** sk_live_XXXX: enough to recognise a key, never the secret. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

const zero = () => ({ available: 0n, reserved: 0n });

export async function listAccounts(db: Kysely<Database>, filter: { status?: AccountStatus; limit: number }): Promise<AccountSummary[]> {
  let query = db.selectFrom('accounts').selectAll();
  if (filter.status) query = query.where('status', '=', filter.status);
  return withBalances(db, await query.orderBy('created_at', 'desc').orderBy('id').limit(filter.limit).execute());
}

/** An account by id, or by e-mail address (anything with an "@"). */
export async function findAccount(db: Kysely<Database>, idOrEmail: string): Promise<AccountSummary | undefined> {
  const byEmail = idOrEmail.includes('@');
  const row = await db
    .selectFrom('accounts')
    .selectAll()
    .where(byEmail ? 'email' : 'id', '=', byEmail ? normalizeEmail(idOrEmail) : idOrEmail)
    .executeTakeFirst();
  if (!row) return undefined;
  const [found] = await withBalances(db, [row]);
  return found;
}

async function withBalances(db: Kysely<Database>, accounts: Selectable<AccountsTable>[]): Promise<AccountSummary[]> {
  if (accounts.length === 0) return [];
  const balances = await db
    .selectFrom('balances')
    .selectAll()
    .where(
      'account_id',
      'in',
      accounts.map((a) => a.id),
    )
    .execute();
  return accounts.map((a) => {
    const summary: AccountSummary = {
      id: a.id,
      email: a.email,
      status: a.status,
      createdAt: Number(a.created_at),
      balances: { live: zero(), test: zero() },
    };
    for (const b of balances) {
      if (b.account_id === a.id) summary.balances[b.mode] = { available: BigInt(b.available), reserved: BigInt(b.reserved) };
    }
    return summary;
  });
}

export async function listKeys(db: Kysely<Database>, accountId: string): Promise<KeyInfo[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'mode', 'display_prefix', 'created_at', 'revoked_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    mode: r.mode,
    prefix: r.display_prefix,
    createdAt: Number(r.created_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  }));
}

export interface StatusChange {
  accountId: string;
  status: AccountStatus;
  /** False when the account already had that status (nothing written). */
  changed: boolean;
}

/**
 * Disables or enables an account. Keys are checked against accounts.status on every request
 * (on SQLite the per-process key cache of `authenticate` stops trusting its entries once an accounts row
 * changes, in this process or another), so the change applies to the very next request on
 * every node. Orders already created keep their reserve and are fulfilled as usual.
 */
export async function setAccountStatus(
  db: Db,
  accountId: string,
  status: AccountStatus,
  within?: (tx: Kysely<Database>, change: { from: AccountStatus; to: AccountStatus }) => Promise<unknown>,
): Promise<StatusChange> {
  return db.kysely.transaction().execute(async (tx) => {
    const from: AccountStatus = status === 'active' ? 'disabled' : 'active';
    const updated = await tx.updateTable('accounts').set({ status }).where('id', '=', accountId).where('status', '=', from).executeTakeFirst();
    if (updated.numUpdatedRows === 1n) {
      await within?.(tx, { from, to: status });
      return { accountId, status, changed: true };
    }
    const row = await tx.selectFrom('accounts').select('status').where('id', '=', accountId).executeTakeFirst();
    if (!row) throw new AccountError(`no account ${accountId}`);
    return { accountId, status: row.status, changed: false };
  });
}

export interface KeyRevocation {
  accountId: string;
  mode: Mode;
  /** The revoked key's prefix; null when the account had no active key of that mode. */
  revokedPrefix: string | null;
}

/**
 * Revokes the account's active key of one mode without issuing a new one (a leaked key, a
 * client leaving). `key reissue` gives the account a key again.
 */
export async function revokeKey(
  db: Db,
  accountId: string,
  mode: Mode,
  now: number,
  within?: (tx: Kysely<Database>, revokedPrefix: string) => Promise<unknown>,
): Promise<KeyRevocation> {
  return db.kysely.transaction().execute(async (tx) => {
    const account = await tx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) throw new AccountError(`no account ${accountId}`);
    const active = await tx
      .selectFrom('api_keys')
      .select(['id', 'display_prefix'])
      .where('account_id', '=', accountId)
      .where('mode', '=', mode)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!active) return { accountId, mode, revokedPrefix: null };
    const updated = await tx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', active.id).where('revoked_at', 'is', null).executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return { accountId, mode, revokedPrefix: null };
    await apiKeyChanged(tx, accountId, mode, 'revoked', active.display_prefix, now);
    await within?.(tx, active.display_prefix);
    return { accountId, mode, revokedPrefix: active.display_prefix };
  });
}

/** Orders of the account by mode and status (all time). */
export async function orderCounts(db: Kysely<Database>, accountId: string): Promise<Record<Mode, Record<string, number>>> {
  const rows = await db
    .selectFrom('orders')
    .select(['mode', 'status', sql`count(*)`.as('n')])
    .where('account_id', '=', accountId)
    .groupBy(['mode', 'status'])
    .execute();
  const counts: Record<Mode, Record<string, number>> = { live: {}, test: {} };
  for (const row of rows) counts[row.mode][row.status] = Number(String(row.n));
  return counts;
}

export interface HistoryEntry {
  id: string;
  mode: Mode;
  kind: string;
  orderId: string | null;
  availableDelta: bigint;
  reservedDelta: bigint;
  reason: string | null;
  createdAt: number;
}

/** The account's balance history (its journal), newest first. */
export async function recentJournal(db: Kysely<Database>, accountId: string, limit: number): Promise<HistoryEntry[]> {
  const rows = await db.selectFrom('journal').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    mode: r.mode,
    kind: r.kind,
    orderId: r.order_id,
    availableDelta: BigInt(r.available_delta),
    reservedDelta: BigInt(r.reserved_delta),
    reason: r.reason,
    createdAt: Number(r.created_at),
  }));
}

/** Every account created before `before` (epoch ms), oldest first: the operator's monthly reports (src/statements/reports.ts). */
export async function accountsCreatedBefore(db: Kysely<Database>, before: number): Promise<{ id: string; email: string; createdAt: number }[]> {
  const rows = await db.selectFrom('accounts').select(['id', 'email', 'created_at']).where('created_at', '<', BigInt(before)).orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => ({ id: row.id, email: row.email, createdAt: Number(row.created_at) }));
}
