/**
 * Where the deposit watcher is in the wallet's history: the cursor (everything up to it is
 * processed) and a backlog walk in progress, read at the start of a poll and moved in the same
 * database transaction as each transaction's deposit row (recordTransaction in store.ts).
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';

export interface Cursor {
  lt: bigint;
  /** Lowercase hex. */
  hash: string;
  chainTime: number;
  checkedAt: number;
}

export async function readCursor(db: Kysely<Database>, address: string): Promise<Cursor | undefined> {
  const row = await db.selectFrom('deposit_cursors').selectAll().where('address', '=', address).executeTakeFirst();
  return row && { lt: BigInt(row.lt), hash: row.hash, chainTime: Number(row.chain_time), checkedAt: Number(row.checked_at) };
}

/** A transaction's place in the deposit wallet's history. */
export interface Position {
  lt: bigint;
  /** Lowercase hex. */
  hash: string;
  /** Block time, epoch ms. */
  chainTime: number;
}

/**
 * A backlog walk in progress (migration 0009-deposit-walks): every transaction from `resume`
 * up to `top` is processed; those between the cursor and `resume` are not (all) yet.
 */
export interface Walk {
  top: Position;
  resume: { lt: bigint; hash: string };
  startedAt: number;
  updatedAt: number;
}

export async function readWalk(db: Kysely<Database>, address: string): Promise<Walk | undefined> {
  const row = await db.selectFrom('deposit_walks').selectAll().where('address', '=', address).executeTakeFirst();
  return (
    row && {
      top: { lt: BigInt(row.top_lt), hash: row.top_hash, chainTime: Number(row.top_chain_time) },
      resume: { lt: BigInt(row.resume_lt), hash: row.resume_hash },
      startedAt: Number(row.started_at),
      updatedAt: Number(row.updated_at),
    }
  );
}

/**
 * How a processed transaction moves the watcher on:
 * - `cursor`: it is the next one after the cursor (everything older is processed): the cursor
 *   moves to it.
 * - `walk`: it belongs to the backlog walk that started at `top`, processed newest first: the
 *   walk's resume point moves back to it. `begin`: the walk is a new one (read no walk at the
 *   start of the poll); it is created if there is none. The cursor does not move: the
 *   transactions between it and this one are not all processed yet.
 */
export type Progress = { kind: 'cursor' } | { kind: 'walk'; top: Position; begin: boolean };

/**
 * Records backlog progress in the transaction's own database transaction. Safe with several
 * watchers: a watcher only moves the resume point of the walk it is paging (same top), only
 * backwards, and only to a transaction it reached by paging contiguously from that walk's
 * resume point (or from its top), so "everything from resume up to top is processed" stays
 * true. A walk another watcher finished (deleted) is never recreated by a continuation; a new
 * walk (`begin`) that finds another in place leaves it alone (its own work is idempotent).
 */
export async function advanceWalk(tx: Kysely<Database>, address: string, top: Position, position: Position, begin: boolean, now: number): Promise<void> {
  if (begin) {
    await tx
      .insertInto('deposit_walks')
      .values({
        address,
        top_lt: top.lt,
        top_hash: top.hash,
        top_chain_time: top.chainTime,
        resume_lt: position.lt,
        resume_hash: position.hash,
        started_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('address').doNothing())
      .execute();
  }
  await tx
    .updateTable('deposit_walks')
    .set({ resume_lt: position.lt, resume_hash: position.hash, updated_at: now })
    .where('address', '=', address)
    .where('top_lt', '=', top.lt)
    .where('top_hash', '=', top.hash)
    .where('resume_lt', '>', position.lt)
    .execute();
}

/**
 * The walk that started at `top` reached the cursor (or the first transaction of the wallet):
 * everything up to `top` is processed, so the cursor moves there (forward only) and the walk
 * ends, in one database transaction. False when the walk was already ended (by another watcher).
 */
export async function finishWalk(db: Db, address: string, top: Position, now = Date.now()): Promise<boolean> {
  return db.kysely.transaction().execute(async (tx) => {
    const ended = await tx.deleteFrom('deposit_walks').where('address', '=', address).where('top_lt', '=', top.lt).where('top_hash', '=', top.hash).executeTakeFirst();
    if (ended.numDeletedRows !== 1n) return false;
    await advanceCursor(tx, address, top, now);
    return true;
  });
}

/** Moves the cursor forward only (two watchers may race; the newer position wins). */
export async function advanceCursor(tx: Kysely<Database>, address: string, position: Position, now: number): Promise<void> {
  await tx
    .insertInto('deposit_cursors')
    .values({ address, lt: position.lt, hash: position.hash, chain_time: position.chainTime, checked_at: now })
    .onConflict((oc) => oc.column('address').doNothing())
    .execute();
  await tx
    .updateTable('deposit_cursors')
    .set({ lt: position.lt, hash: position.hash, chain_time: position.chainTime })
    .where('address', '=', address)
    .where('lt', '<', position.lt)
    .execute();
}

/** A poll reached the newest transaction: the watcher is caught up as of `now`. */
export async function markChecked(db: Kysely<Database>, address: string, now: number): Promise<void> {
  await db.updateTable('deposit_cursors').set({ checked_at: now }).where('address', '=', address).where('checked_at', '<', BigInt(now)).execute();
}
