import { type Expression, sql } from 'kysely';
import { isPublicId, newId } from '../domain/random.js';

/**
 * Journal entry ids (docs/performance-history.md "Sixteenth round"): a random head, as every public id has, followed by the entry's
 * `seq` within its balance, in decimal: `jrn_<22 random base62><seq>`.
 *
 * Why: an entry id is only ever looked up as a history cursor, within the caller's own balance.
 * The seq it carries finds the row through `journal_history` (account, mode, seq), so the
 * journal needs no index on its ids: a random index took a page of its own for nearly every
 * movement, two per order (reserve and debit), about a fifth of the WAL frames an SQLite
 * commit wrote under the creation load. The random head keeps ids unguessable, and a cursor
 * must match the stored id in full, not only its seq.
 *
 * Entries written before migration 0014 have the head alone (26 characters) and are found by
 * the partial index `journal_legacy_id`.
 */
/** An id of the head alone: `journal_legacy_id`'s predicate names older entries by this length. */
export const LEGACY_ENTRY_ID_LENGTH = 'jrn_'.length + 22;

/** The random part of a new entry's id; the seq is appended once the balance has moved. */
export const newEntryIdHead = (): string => newId('jrn');

export const entryId = (head: string, seq: bigint): string => `${head}${seq}`;

/** entryId in SQL, for PostgreSQL's statements that write the entry with the seq they take. */
export const entryIdSql = (head: string, seq: Expression<unknown>) => sql<string>`cast(${head} as text) || cast(${seq} as text)`;

/** How to find the entry `id` names: by its seq, or (older entries) by the id itself. */
export type EntryLookup = { seq: bigint } | { legacyId: string };

/** undefined for anything no entry can have. */
export function entryLookup(id: string): EntryLookup | undefined {
  if (!isPublicId('jrn', id) || id.length < LEGACY_ENTRY_ID_LENGTH) return undefined;
  const tail = id.slice(LEGACY_ENTRY_ID_LENGTH);
  if (tail === '') return { legacyId: id };
  // seq starts at 1 and is a bigint column: at most 19 digits, no leading zero.
  return /^[1-9][0-9]{0,18}$/.test(tail) ? { seq: BigInt(tail) } : undefined;
}
