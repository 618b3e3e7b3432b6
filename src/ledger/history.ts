import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { Database, JournalRow } from '../db/schema.js';
import { entryLookup, LEGACY_ENTRY_ID_LENGTH } from './entry-id.js';
import type { JournalEntry } from './ledger.js';

/**
 * Balance history: the journal of one account and mode, newest first by its per-balance
 * sequence (`seq`, the order the movements were applied in). Cursors are journal ids of the
 * same balance, found by the seq they carry (entry-id.ts); the index journal_history
 * (account_id, mode, seq) serves every page.
 */

function entryFromRow(row: JournalRow): JournalEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    kind: row.kind,
    orderId: row.order_id,
    reason: row.reason,
    availableDelta: BigInt(row.available_delta),
    reservedDelta: BigInt(row.reserved_delta),
    seq: BigInt(row.seq),
    after: { available: BigInt(row.balance_available), reserved: BigInt(row.balance_reserved) },
    createdAt: Number(row.created_at),
  };
}

/** The entry `id` of this balance, or undefined (unknown, malformed, or another balance's). */
export async function findEntry(db: Kysely<Database>, id: string, ref: { accountId: string; mode: Mode }): Promise<JournalEntry | undefined> {
  const lookup = entryLookup(id);
  if (!lookup) return undefined;
  let select = db.selectFrom('journal').selectAll().where('account_id', '=', ref.accountId).where('mode', '=', ref.mode);
  // By seq through journal_history; the whole id must still match, not only the seq it carries.
  if ('seq' in lookup) select = select.where('seq', '=', lookup.seq).where('id', '=', id);
  // The predicate of journal_legacy_id, repeated so that the planner may use that index.
  else select = select.where('id', '=', lookup.legacyId).where(sql<boolean>`length(id) = ${sql.lit(LEGACY_ENTRY_ID_LENGTH)}`);
  const row = await select.executeTakeFirst();
  return row && entryFromRow(row);
}

export interface HistoryQuery {
  accountId: string;
  mode: Mode;
  limit: number;
  /** Entries older than this one. */
  startingAfter?: JournalEntry;
  /** Entries newer than this one. */
  endingBefore?: JournalEntry;
}

export async function balanceHistory(db: Kysely<Database>, query: HistoryQuery): Promise<{ entries: JournalEntry[]; hasMore: boolean }> {
  let select = db.selectFrom('journal').selectAll().where('account_id', '=', query.accountId).where('mode', '=', query.mode);
  const backwards = query.endingBefore !== undefined;
  if (query.endingBefore) select = select.where('seq', '>', query.endingBefore.seq);
  else if (query.startingAfter) select = select.where('seq', '<', query.startingAfter.seq);
  const rows = await select
    .orderBy('seq', backwards ? 'asc' : 'desc')
    .limit(query.limit + 1)
    .execute();
  const entries = rows.slice(0, query.limit).map(entryFromRow);
  if (backwards) entries.reverse();
  return { entries, hasMore: rows.length > query.limit };
}
