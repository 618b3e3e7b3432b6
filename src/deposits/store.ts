import { type Kysely, sql } from 'kysely';
import { accountForMemo } from '../accounts/deposit-memo.js';
import { recordAudit } from '../audit/audit.js';
import type { Decimal } from '../domain/decimal.js';
import { formatTon } from '../domain/money.js';
import { formatDecimal, formatUsdt, usdtToNanotons } from '../domain/usdt.js';
import { isPublicId, newId } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import type { Database, DepositRow, DepositsTable } from '../db/schema.js';
import { move } from '../ledger/ledger.js';
import { depositCredited, depositUnmatched } from '../notifications/notices.js';

/**
 * The deposits table (migration 0005-deposits): one row per incoming transfer the watcher
 * decided about, credited or unmatched, written in the same transaction as the ledger credit
 * and the cursor. The unique transaction hash is what makes crediting exactly-once. The
 * operator settles an unmatched one: `assign` credits it to an account, `return` records that
 * the TON was sent back by hand (status `returned`, migration 0010-deposit-returns).
 */
type UnmatchedReason = NonNullable<DepositsTable['reason']>;
type DepositAsset = DepositRow['asset'];

export interface Deposit {
  id: string;
  txHash: string;
  lt: bigint;
  address: string;
  sender: string;
  amount: bigint;
  comment: string | null;
  status: DepositStatus;
  reason: UnmatchedReason | null;
  accountId: string | null;
  chainTime: number;
  createdAt: number;
  creditedAt: number | null;
  creditedBy: 'watcher' | 'operator' | null;
  /** When the operator recorded that the TON went back (status `returned`). */
  returnedAt: number | null;
  asset: DepositAsset;
  /** USDT (or a foreign jetton's) units announced by the notification; null for TON. */
  jettonAmount: bigint | null;
  jettonWallet: string | null;
  /** The rate a USDT deposit was converted at (USD per TON, decimal text) and the feed's time. */
  rate: string | null;
  rateAt: number | null;
}

type DepositStatus = DepositsTable['status'];

function depositFromRow(row: DepositRow): Deposit {
  return {
    id: row.id,
    txHash: row.tx_hash,
    lt: BigInt(row.lt),
    address: row.address,
    sender: row.sender,
    amount: BigInt(row.amount),
    comment: row.comment,
    status: row.status,
    reason: row.reason,
    accountId: row.account_id,
    chainTime: Number(row.chain_time),
    createdAt: Number(row.created_at),
    creditedAt: row.credited_at === null ? null : Number(row.credited_at),
    creditedBy: row.credited_by,
    returnedAt: row.returned_at === null ? null : Number(row.returned_at),
    asset: row.asset,
    jettonAmount: row.jetton_amount === null ? null : BigInt(row.jetton_amount),
    jettonWallet: row.jetton_wallet,
    rate: row.rate,
    rateAt: row.rate_at === null ? null : Number(row.rate_at),
  };
}

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
async function advanceWalk(tx: Kysely<Database>, address: string, top: Position, position: Position, begin: boolean, now: number): Promise<void> {
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
async function advanceCursor(tx: Kysely<Database>, address: string, position: Position, now: number): Promise<void> {
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

/** What the watcher makes of one transaction; `null` deposit = nothing to record (ignored). */
export interface Processed {
  address: string;
  position: Position;
  deposit: null | FoundDeposit;
}

interface FoundDeposit {
  sender: string;
  /** TON: what arrived. USDT: ignored (the conversion decides); jetton: the TON it carried. */
  amount: bigint;
  comment: string | null;
  memo: string | null;
  reason: 'no_comment' | 'memo_invalid' | 'below_minimum' | null;
  /** Absent: a TON transfer. */
  jetton?: UsdtFound | ForeignJetton;
}

/** A notification from the deposit wallet's own USDT jetton wallet. */
interface UsdtFound {
  kind: 'USDT';
  units: bigint;
  jettonWallet: string;
  /** The rate feed's answer just before recording (undefined: no fresh rate), and the spread. */
  conversion: { rate: UsdtRate | undefined; spreadPercent: Decimal };
}

/** A notification from any other contract: recorded as ignored, never credited. */
interface ForeignJetton {
  kind: 'jetton';
  units: bigint;
  jettonWallet: string;
}

/** USD per TON and when the feed had it (epoch ms). */
export interface UsdtRate {
  rate: Decimal;
  at: number;
}

export type Outcome =
  | { kind: 'ignored' }
  | { kind: 'duplicate' }
  | { kind: 'credited'; accountId: string; id: string }
  | { kind: 'unmatched'; reason: UnmatchedReason; id: string }
  | { kind: 'awaiting_rate'; accountId: string; id: string }
  | { kind: 'unknown_jetton'; id: string };

/**
 * One transaction, one database transaction: the deposit row (unique per hash), the credit of
 * the account's live balance and the progress (the cursor, or the backlog walk). A hash seen
 * before inserts nothing and credits nothing, whoever (another watcher, a restart) recorded it
 * first.
 *
 * A USDT deposit that matches an account is credited at the rate given, or, without one,
 * recorded as `awaiting_rate` for `creditAwaitingRate`. A foreign jetton's notification is
 * recorded as `ignored` (reason `unknown_jetton`).
 */
export async function recordTransaction(db: Db, input: Processed, now = Date.now(), progress: Progress = { kind: 'cursor' }): Promise<Outcome> {
  return db.kysely.transaction().execute(async (tx) => {
    if (progress.kind === 'cursor') await advanceCursor(tx, input.address, input.position, now);
    else await advanceWalk(tx, input.address, progress.top, input.position, progress.begin, now);
    const found = input.deposit;
    if (!found) return { kind: 'ignored' } as const;
    const jetton = found.jetton;
    const base = {
      id: newId('dep'),
      tx_hash: input.position.hash,
      lt: input.position.lt,
      address: input.address,
      sender: found.sender,
      comment:
        found.comment === null
          ? null
          : [...found.comment]
              .slice(0, 1024)
              .join('')
              .replace(/\u0000/g, '\uFFFD'),
      chain_time: input.position.chainTime,
      created_at: now,
      asset: jetton?.kind ?? 'TON',
      jetton_amount: jetton ? jetton.units.toString() : null,
      jetton_wallet: jetton ? jetton.jettonWallet : null,
    } as const;
    if (jetton?.kind === 'jetton') {
      const inserted = await tx
        .insertInto('deposits')
        .values({ ...base, amount: found.amount, status: 'ignored', reason: 'unknown_jetton', account_id: null, credited_at: null, credited_by: null })
        .onConflict((oc) => oc.column('tx_hash').doNothing())
        .executeTakeFirst();
      return inserted.numInsertedOrUpdatedRows === 1n ? ({ kind: 'unknown_jetton', id: base.id } as const) : ({ kind: 'duplicate' } as const);
    }
    let reason: UnmatchedReason | null = found.reason;
    const accountId = reason === null && found.memo !== null ? await accountForMemo(tx, found.memo) : undefined;
    if (reason === null && !accountId) reason = 'memo_unknown';
    const rate = jetton?.kind === 'USDT' ? jetton.conversion.rate : undefined;
    const waiting = reason === null && jetton?.kind === 'USDT' && !rate;
    const amount = jetton?.kind === 'USDT' ? (reason === null && rate ? usdtToNanotons(jetton.units, rate.rate, jetton.conversion.spreadPercent) : 0n) : found.amount;
    const credited = reason === null && !waiting;
    const inserted = await tx
      .insertInto('deposits')
      .values({
        ...base,
        amount,
        status: credited ? 'credited' : waiting ? 'awaiting_rate' : 'unmatched',
        reason,
        account_id: reason === null ? (accountId as string) : null,
        credited_at: credited ? now : null,
        credited_by: credited ? 'watcher' : null,
        rate: credited && rate ? formatDecimal(rate.rate) : null,
        rate_at: credited && rate ? rate.at : null,
      })
      .onConflict((oc) => oc.column('tx_hash').doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows !== 1n) return { kind: 'duplicate' } as const;
    if (reason !== null) {
      await depositUnmatched(tx, { txHash: base.tx_hash, amount: found.amount, reason, comment: base.comment }, now);
      return { kind: 'unmatched', reason, id: base.id } as const;
    }
    if (waiting) return { kind: 'awaiting_rate', accountId: accountId as string, id: base.id } as const;
    await credit(
      tx,
      accountId as string,
      amount,
      input.position.hash,
      now,
      jetton?.kind === 'USDT' && rate ? { units: jetton.units, rate: rate.rate, spreadPercent: jetton.conversion.spreadPercent } : undefined,
    );
    return { kind: 'credited', accountId: accountId as string, id: base.id } as const;
  });
}

/**
 * Credits the USDT deposits waiting for a rate, at the rate `currentRate` gives now (the rate
 * of the moment they are credited; none: they wait on), oldest first, at most `limit`. Each is claimed with a conditional UPDATE in its
 * own transaction with the credit, so two watchers (or a restart) credit each once.
 */
export async function creditAwaitingRate(db: Db, currentRate: () => Promise<UsdtRate | undefined>, spreadPercent: Decimal, now = Date.now(), limit = 100): Promise<Deposit[]> {
  const waiting = await db.kysely.selectFrom('deposits').selectAll().where('status', '=', 'awaiting_rate').orderBy('lt').limit(limit).execute();
  if (waiting.length === 0) return [];
  // Asked after the rows were read and outside any database transaction.
  const rate = await currentRate();
  if (!rate) return [];
  const done: Deposit[] = [];
  for (const row of waiting) {
    const units = BigInt(row.jetton_amount ?? '0');
    const amount = usdtToNanotons(units, rate.rate, spreadPercent);
    const credited = await db.kysely.transaction().execute(async (tx) => {
      const claimed = await tx
        .updateTable('deposits')
        .set({ status: 'credited', amount, rate: formatDecimal(rate.rate), rate_at: rate.at, credited_at: now, credited_by: 'watcher' })
        .where('id', '=', row.id)
        .where('status', '=', 'awaiting_rate')
        .executeTakeFirst();
      if (claimed.numUpdatedRows !== 1n) return false;
      await credit(tx, row.account_id as string, amount, row.tx_hash, now, { units, rate: rate.rate, spreadPercent });
      return true;
    });
    if (credited)
      done.push(
        depositFromRow({ ...row, status: 'credited', amount: amount, rate: formatDecimal(rate.rate), rate_at: BigInt(rate.at), credited_at: BigInt(now), credited_by: 'watcher' }),
      );
  }
  return done;
}

/**
 * The journal entry of a deposit; its reason is the deposit's reference in the balance history
 * (docs/api.md "GET /balance/history"): the transaction hash, and for USDT the amount, the
 * rate and the spread it was converted at.
 */
async function credit(
  tx: Kysely<Database>,
  accountId: string,
  amount: bigint,
  txHash: string,
  now: number,
  usdt?: { units: bigint; rate: Decimal; spreadPercent: Decimal },
): Promise<void> {
  const reason = usdt
    ? `USDT deposit ${txHash}: ${formatUsdt(usdt.units)} USDT at ${formatDecimal(usdt.rate)} USD/TON less ${formatDecimal(usdt.spreadPercent)} %`
    : `TON deposit ${txHash}`;
  const moved = await move(tx, { accountId, mode: 'live' }, { kind: 'deposit', amount, reason, now });
  // A credit cannot fail a balance check; a missing balance row would be a broken account.
  if (!moved) throw new Error(`account ${accountId} has no live balance row`);
  await depositCredited(tx, { accountId, amount, usdt: usdt ? formatUsdt(usdt.units) : null, txHash }, now);
}

export class AssignError extends Error {}

/**
 * The operator credits an unmatched deposit to an account (`deposit assign`): once only — the
 * row is claimed with a conditional UPDATE, so a second assign (or a concurrent one) finds it
 * already credited. The audit record commits with the credit.
 */
export async function assignDeposit(
  db: Db,
  input: { txHash: string; accountId: string; actor: string; reason?: string; usdt?: { rate: UsdtRate | undefined; spreadPercent: Decimal } },
  now = Date.now(),
): Promise<Deposit> {
  const txHash = normalizeTxHash(input.txHash);
  if (!txHash) throw new AssignError(`--tx must be a transaction hash (64 hex characters or base64), got "${input.txHash}"`);
  return db.kysely.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('deposits').selectAll().where('tx_hash', '=', txHash).executeTakeFirst();
    if (!row) throw new AssignError(`no deposit with transaction hash ${txHash}`);
    if (row.status !== 'unmatched') throw new AssignError(settled(row));
    const account = await tx.selectFrom('accounts').select('id').where('id', '=', input.accountId).executeTakeFirst();
    if (!account) throw new AssignError(`no account ${input.accountId}`);
    // USDT is converted at the rate of the moment it is assigned, like the watcher's credits.
    let usdt: { units: bigint; rate: Decimal; at: number; spreadPercent: Decimal } | undefined;
    if (row.asset === 'USDT') {
      const rate = input.usdt?.rate;
      if (!rate || !input.usdt)
        throw new AssignError(
          `deposit ${txHash} is ${formatUsdt(BigInt(row.jetton_amount ?? '0'))} USDT, converted at the current TON/USD rate, and no fresh rate is available: try again when the rate feed answers`,
        );
      usdt = { units: BigInt(row.jetton_amount ?? '0'), rate: rate.rate, at: rate.at, spreadPercent: input.usdt.spreadPercent };
    }
    const amount = usdt ? usdtToNanotons(usdt.units, usdt.rate, usdt.spreadPercent) : BigInt(row.amount);
    const converted = usdt ? { amount, rate: formatDecimal(usdt.rate), rate_at: usdt.at } : {};
    const claimed = await tx
      .updateTable('deposits')
      .set({ status: 'credited', account_id: input.accountId, credited_at: now, credited_by: 'operator', ...converted })
      .where('tx_hash', '=', txHash)
      .where('status', '=', 'unmatched')
      .executeTakeFirst();
    if (claimed.numUpdatedRows !== 1n) throw new AssignError(`deposit ${txHash} was credited or returned meanwhile`);
    await credit(tx, input.accountId, amount, txHash, now, usdt);
    await recordAudit(tx, {
      actor: input.actor,
      action: 'deposit.assign',
      accountId: input.accountId,
      mode: 'live',
      reason: input.reason ?? null,
      details: {
        tx_hash: txHash,
        deposit_id: row.id,
        amount: formatTon(amount),
        ...(usdt && { usdt_amount: formatUsdt(usdt.units), rate: formatDecimal(usdt.rate), spread_percent: formatDecimal(usdt.spreadPercent) }),
        unmatched_reason: row.reason,
        comment: row.comment,
      },
      now,
    });
    return depositFromRow({
      ...row,
      status: 'credited',
      account_id: input.accountId,
      credited_at: BigInt(now),
      credited_by: 'operator',
      ...(usdt && { amount, rate: formatDecimal(usdt.rate), rate_at: BigInt(usdt.at) }),
    });
  });
}

/** Why a deposit that is no longer unmatched cannot be assigned or returned. */
function settled(row: DepositRow): string {
  if (row.status === 'credited') return `deposit ${row.tx_hash} is already credited to ${row.account_id}`;
  if (row.status === 'awaiting_rate') return `deposit ${row.tx_hash} matched ${row.account_id} and is credited by the watcher as soon as a fresh TON/USD rate exists`;
  if (row.status === 'ignored')
    return `deposit ${row.tx_hash} is a notification from a jetton wallet that is not the deposit wallet's USDT wallet (${row.jetton_wallet}): no USDT arrived, there is nothing to assign or return`;
  return `deposit ${row.tx_hash} is already returned to its sender (recorded ${new Date(Number(row.returned_at)).toISOString()})`;
}

export class ReturnError extends Error {}

/**
 * The operator records that an unmatched deposit's TON was sent back to its sender by hand
 * (`deposit return`). Nothing is sent on chain and no balance changes: the row leaves the
 * unmatched ones (status `returned`), once — a conditional UPDATE, so a concurrent assign or
 * return of the same deposit finds it settled. The audit record commits with it.
 */
export async function returnDeposit(db: Db, input: { txHash: string; actor: string; reason?: string }, now = Date.now()): Promise<Deposit> {
  const txHash = normalizeTxHash(input.txHash);
  if (!txHash) throw new ReturnError(`--tx must be a transaction hash (64 hex characters or base64), got "${input.txHash}"`);
  return db.kysely.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('deposits').selectAll().where('tx_hash', '=', txHash).executeTakeFirst();
    if (!row) throw new ReturnError(`no deposit with transaction hash ${txHash}`);
    if (row.status !== 'unmatched') throw new ReturnError(settled(row));
    const claimed = await tx
      .updateTable('deposits')
      .set({ status: 'returned', returned_at: now })
      .where('tx_hash', '=', txHash)
      .where('status', '=', 'unmatched')
      .executeTakeFirst();
    if (claimed.numUpdatedRows !== 1n) throw new ReturnError(`deposit ${txHash} was credited or returned meanwhile`);
    const amount = BigInt(row.amount);
    await recordAudit(tx, {
      actor: input.actor,
      action: 'deposit.return',
      mode: 'live',
      reason: input.reason ?? null,
      details: {
        tx_hash: txHash,
        deposit_id: row.id,
        ...(row.asset === 'USDT' ? { usdt_amount: formatUsdt(BigInt(row.jetton_amount ?? '0')) } : { amount: formatTon(amount) }),
        sender: row.sender,
        unmatched_reason: row.reason,
        comment: row.comment,
      },
      now,
    });
    return depositFromRow({ ...row, status: 'returned', returned_at: BigInt(now) });
  });
}

/** A tx hash as hex (64) or base64/base64url (44/43): lowercase hex, or undefined. */
export function normalizeTxHash(text: string): string | undefined {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return trimmed.toLowerCase();
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes.toString('hex');
  }
  return undefined;
}

export interface DepositFilter {
  accountId?: string;
  status?: DepositStatus | readonly DepositStatus[];
  /** Deposits older (smaller lt) than the one with this id. */
  startingAfter?: { lt: bigint; id: string };
  limit: number;
}

/** Newest first (by logical time, then id). */
export async function listDeposits(db: Kysely<Database>, filter: DepositFilter): Promise<Deposit[]> {
  let query = db.selectFrom('deposits').selectAll();
  if (filter.accountId) query = query.where('account_id', '=', filter.accountId);
  if (typeof filter.status === 'string') query = query.where('status', '=', filter.status);
  else if (filter.status) query = query.where('status', 'in', filter.status);
  const after = filter.startingAfter;
  if (after) query = query.where((eb) => eb.or([eb('lt', '<', after.lt), eb.and([eb('lt', '=', after.lt), eb('id', '<', after.id)])]));
  const rows = await query.orderBy('lt', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map(depositFromRow);
}

export async function findDeposit(db: Kysely<Database>, where: { id: string; accountId?: string }): Promise<Deposit | undefined> {
  if (!isPublicId('dep', where.id)) return undefined;
  let query = db.selectFrom('deposits').selectAll().where('id', '=', where.id);
  if (where.accountId) query = query.where('account_id', '=', where.accountId);
  const row = await query.executeTakeFirst();
  return row && depositFromRow(row);
}

/** Counts for the operator (stats, readiness): deposits still waiting (returned ones are settled). */
export async function unmatchedCount(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('deposits').select(sql<string | bigint>`count(*)`.as('n')).where('status', '=', 'unmatched').executeTakeFirstOrThrow();
  return Number(row.n);
}
