import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { type Authentication, authenticationOf, KEY_VERDICT_COLUMNS, keyVerdictSource } from '../accounts/key-verdict.js';
import { utcDay } from '../domain/time.js';
import { addToBalanceDay, addToBalanceDayFromMoved } from './balance-days.js';
import { entryId, entryIdSql, newEntryIdHead } from './entry-id.js';
import { coalescedRead, onPostgres, preparedQuery } from '../db/prepared.js';
import type { Database, JournalTable } from '../db/schema.js';

/**
 * The two-phase ledger (docs/architecture.md "The two-phase ledger"): every balance movement is one conditional UPDATE of
 * the balance row plus one immutable journal row, always inside the caller's transaction so
 * that the order change, the balance and the journal commit together or not at all.
 *
 *   deposit / adjustment  available ±x
 *   reserve               available −x, reserved +x   (order created)
 *   debit                 reserved −x                 (order delivered: posted)
 *   release               available +x, reserved −x   (order failed: voided)
 */
export interface BalanceRef {
  accountId: string;
  mode: Mode;
}

export interface Balance {
  available: bigint;
  reserved: bigint;
}

type Kind = JournalTable['kind'];
const DELTAS: Record<Kind, (amount: bigint) => [available: bigint, reserved: bigint]> = {
  deposit: (x) => [x, 0n],
  adjustment: (x) => [x, 0n],
  reserve: (x) => [-x, x],
  debit: (x) => [0n, -x],
  release: (x) => [x, -x],
};

export interface Movement {
  kind: Kind;
  /** Positive, except for adjustments, which may be negative. */
  amount: bigint;
  orderId?: string;
  reason?: string;
  now: number;
}

/** A journal row as balance history shows it. */
export interface JournalEntry {
  id: string;
  accountId: string;
  mode: Mode;
  kind: Kind;
  orderId: string | null;
  reason: string | null;
  availableDelta: bigint;
  reservedDelta: bigint;
  seq: bigint;
  /** The balance right after this movement. */
  after: Balance;
  createdAt: number;
}

/** What `applyMovement` wrote, and whether it crossed the balance's low-balance threshold. */
export interface AppliedMovement extends JournalEntry {
  /**
   * The low-balance threshold this movement took the available balance below (it was at or
   * above it before), else null: one crossing, seen by the one movement that made it
   * (low-balance.ts).
   */
  crossedBelow: bigint | null;
}

/**
 * Applies a movement if neither side of the balance would go negative. Returns false (and
 * writes nothing) otherwise. The check and the change are one statement: no read-modify-write.
 */
export async function move(tx: Kysely<Database>, ref: BalanceRef, movement: Movement): Promise<boolean> {
  return (await applyMovement(tx, ref, movement)) !== undefined;
}

/**
 * `move()` returning the journal entry it wrote (undefined when refused). The balance after the
 * movement and the entry's sequence number come back from the same UPDATE (RETURNING), so the
 * journal's `balance_*` columns are exactly what the balance row became, even under concurrency.
 */
export async function applyMovement(tx: Kysely<Database>, ref: BalanceRef, movement: Movement): Promise<AppliedMovement | undefined> {
  const [availableDelta, reservedDelta] = DELTAS[movement.kind](movement.amount);
  const idHead = newEntryIdHead();
  const orderId = movement.orderId ?? null;
  const reason = movement.reason ?? null;
  let after: { seq: bigint; available: bigint; reserved: bigint; threshold: bigint | null } | undefined;
  if (onPostgres(tx)) {
    // One round trip: the update and the insert that reads its RETURNING, as one statement.
    const [row] = await updateBalanceAndJournal(tx, ref.accountId, ref.mode, availableDelta, reservedDelta, idHead, movement.kind, orderId, reason, movement.now);
    after = row && { seq: BigInt(row.seq), available: BigInt(row.balance_available), reserved: BigInt(row.balance_reserved), threshold: nullableBigInt(row.low_balance_threshold) };
  } else {
    const [updated] = await updateBalance(tx, ref.accountId, ref.mode, availableDelta, reservedDelta);
    after = updated && {
      seq: BigInt(updated.journal_seq),
      available: BigInt(updated.available),
      reserved: BigInt(updated.reserved),
      threshold: nullableBigInt(updated.low_balance_threshold),
    };
    if (after) {
      await insertJournal(
        tx,
        entryId(idHead, after.seq),
        ref.accountId,
        ref.mode,
        movement.kind,
        orderId,
        availableDelta,
        reservedDelta,
        reason,
        movement.now,
        after.seq,
        after.available,
        after.reserved,
      );
      if (availableDelta !== 0n) await addToBalanceDay(tx, ref.accountId, ref.mode, utcDay(movement.now), availableDelta);
    }
  }
  if (!after) return undefined;
  return {
    id: entryId(idHead, after.seq),
    accountId: ref.accountId,
    mode: ref.mode,
    kind: movement.kind,
    orderId,
    reason,
    availableDelta,
    reservedDelta,
    seq: after.seq,
    after: { available: after.available, reserved: after.reserved },
    createdAt: movement.now,
    crossedBelow: crossedBelow(after.threshold, after.available - availableDelta, after.available),
  };
}

const nullableBigInt = (value: bigint | number | string | null) => (value === null ? null : BigInt(value));

/**
 * The threshold when a movement from `before` to `after` (available) crosses it downwards. The
 * balance row's UPDATE is the movement, and concurrent movements of one balance are applied one
 * after the other (its row lock), so their befores and afters form one history: each downward
 * crossing is seen by exactly one movement, and the next one needs a movement back to or above
 * the threshold first (docs/api.md "Low-balance alert").
 */
function crossedBelow(threshold: bigint | null, before: bigint, after: bigint): bigint | null {
  return threshold !== null && before >= threshold && after < threshold ? threshold : null;
}

// Every order moves the ledger two or three times: these statements are compiled once.
const balanceUpdate = (db: Kysely<Database>, accountId: string, mode: Mode, availableDelta: bigint, reservedDelta: bigint) =>
  db
    .updateTable('balances')
    .set({
      available: sql`available + ${availableDelta}`,
      reserved: sql`reserved + ${reservedDelta}`,
      journal_seq: sql`journal_seq + 1`,
    })
    .where('account_id', '=', accountId)
    .where('mode', '=', mode)
    .where(sql<boolean>`available + ${availableDelta} >= 0`)
    .where(sql<boolean>`reserved + ${reservedDelta} >= 0`)
    .returning(['available', 'reserved', 'journal_seq', 'low_balance_threshold']);

const updateBalance = preparedQuery(balanceUpdate);

/**
 * PostgreSQL only (SQLite has no UPDATE in a WITH clause): no balance row moved, no entry. The
 * movement's day in balance_days (balance-days.ts) is added in the same statement.
 */
const updateBalanceAndJournal = preparedQuery(
  (
    db,
    accountId: string,
    mode: Mode,
    availableDelta: bigint,
    reservedDelta: bigint,
    idHead: string,
    kind: Kind,
    orderId: string | null,
    reason: string | null,
    createdAt: number,
  ) =>
    db
      .with('moved', (q) => balanceUpdate(q as Kysely<Database>, accountId, mode, availableDelta, reservedDelta))
      // A raw body, in its parentheses: Kysely types a CTE as a query builder, and compiles any expression as it is.
      .with('balance_day', () => sql`(${addToBalanceDayFromMoved({ accountId, mode, now: createdAt, net: sql<bigint>`cast(${availableDelta} as bigint)` })})` as never)
      .insertInto('journal')
      .columns([
        'id',
        'account_id',
        'mode',
        'kind',
        'order_id',
        'order_no',
        'available_delta',
        'reserved_delta',
        'reason',
        'created_at',
        'seq',
        'balance_available',
        'balance_reserved',
      ])
      .expression((eb) =>
        eb
          .selectFrom('moved')
          .select([
            entryIdSql(idHead, sql.ref('moved.journal_seq')).as('id'),
            sql<string>`cast(${accountId} as text)`.as('account_id'),
            sql<Mode>`cast(${mode} as text)`.as('mode'),
            sql<Kind>`cast(${kind} as text)`.as('kind'),
            sql<string | null>`cast(${orderId} as text)`.as('order_id'),
            orderNumberOf(orderId).as('order_no'),
            sql<bigint>`cast(${availableDelta} as bigint)`.as('available_delta'),
            sql<bigint>`cast(${reservedDelta} as bigint)`.as('reserved_delta'),
            sql<string | null>`cast(${reason} as text)`.as('reason'),
            sql<bigint>`cast(${createdAt} as bigint)`.as('created_at'),
            'moved.journal_seq',
            'moved.available',
            'moved.reserved',
          ]),
      )
      .returning(['seq', 'balance_available', 'balance_reserved', sql<string | null>`(select low_balance_threshold from moved)`.as('low_balance_threshold')]),
);

/** The movement's order's number (null without an order): its index in the journal. */
const orderNumberOf = (orderId: string | null) => sql<bigint | null>`(select order_no from orders where id = cast(${orderId} as text))`;

const insertJournal = preparedQuery(
  (
    db,
    id: string,
    accountId: string,
    mode: Mode,
    kind: Kind,
    orderId: string | null,
    availableDelta: bigint,
    reservedDelta: bigint,
    reason: string | null,
    createdAt: number,
    seq: bigint,
    balanceAvailable: bigint,
    balanceReserved: bigint,
  ) =>
    db.insertInto('journal').values({
      id,
      account_id: accountId,
      mode,
      kind,
      order_id: orderId,
      order_no: orderNumberOf(orderId),
      available_delta: availableDelta,
      reserved_delta: reservedDelta,
      reason,
      created_at: createdAt,
      seq,
      balance_available: balanceAvailable,
      balance_reserved: balanceReserved,
    }),
);

export async function openBalances(tx: Kysely<Database>, accountId: string): Promise<void> {
  await tx
    .insertInto('balances')
    .values((['live', 'test'] as const).map((mode) => ({ account_id: accountId, mode, available: 0, reserved: 0 })))
    .execute();
}

/** An account's balances (one per mode). */
const selectBalances = (db: Kysely<Database>) => db.selectFrom('balances').select(['account_id', 'mode', 'available', 'reserved']);
const selectAccountBalances = coalescedRead(
  preparedQuery((db, accountId: string) => selectBalances(db).where('account_id', '=', accountId)),
  preparedQuery((db, accountIds: string[]) => selectBalances(db).where('account_id', '=', sql<string>`any(${accountIds})`)),
  (row) => row.account_id,
);

/**
 * PostgreSQL, GET /balance: an API key's verdict and the balance of its account and mode, by the
 * key's hash, in one statement (auth.ts Prefetch). No row: no such key. A key with no balance
 * row yet has a balance of zero.
 */
const selectBalanceOfKey = coalescedRead(
  preparedQuery((db, keyHash: string) => balanceOfKey(db).where('k.key_hash', '=', keyHash)),
  preparedQuery((db, keyHashes: string[]) => balanceOfKey(db).where('k.key_hash', '=', sql<string>`any(${keyHashes})`)),
  (row) => row.key_hash,
);
function balanceOfKey(db: Kysely<Database>) {
  return keyVerdictSource(db)
    .leftJoin('balances as b', (join) => join.onRef('b.account_id', '=', 'k.account_id').onRef('b.mode', '=', 'k.mode'))
    .select(['k.key_hash', ...KEY_VERDICT_COLUMNS, 'b.available', 'b.reserved']);
}

/**
 * The read of a key's verdict with its balance (readBalanceOfKey) where the engine gains by it:
 * on PostgreSQL one statement instead of two round trips; undefined on SQLite, where the key
 * comes from the cache and the balance from a local read (GET /balance decides nothing itself).
 */
export function balanceWithKeyReader(db: Kysely<Database>): ((keyHash: string) => ReturnType<typeof readBalanceOfKey>) | undefined {
  return onPostgres(db) ? (keyHash) => readBalanceOfKey(db, keyHash) : undefined;
}

export async function readBalanceOfKey(db: Kysely<Database>, keyHash: string): Promise<{ authentication: Authentication; data: Balance }> {
  const [row] = await selectBalanceOfKey(db, keyHash);
  const balance = row?.available != null && row.reserved != null ? { available: BigInt(row.available), reserved: BigInt(row.reserved) } : { available: 0n, reserved: 0n };
  return { authentication: authenticationOf(row), data: balance };
}

export async function readBalance(db: Kysely<Database>, ref: BalanceRef): Promise<Balance | undefined> {
  const row = (await selectAccountBalances(db, ref.accountId)).find((balance) => balance.mode === ref.mode);
  return row && { available: BigInt(row.available), reserved: BigInt(row.reserved) };
}
