import { type Kysely, sql } from 'kysely';
import { accountForMemo } from '../accounts/deposit-memo.js';
import type { Decimal } from '../domain/decimal.js';
import { formatDecimal, formatUsdt, usdtToNanotons } from '../domain/usdt.js';
import { isPublicId, newId } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import type { Database, DepositRow, DepositsTable } from '../db/schema.js';
import { move } from '../ledger/ledger.js';
import { depositCredited, depositUnmatched } from '../notifications/notices.js';
import { advanceCursor, advanceWalk, type Position, type Progress } from './progress.js';

/**
 * The deposits table (migration 0005-deposits): one row per incoming transfer the watcher
 * decided about, credited or unmatched, written in the same transaction as the ledger credit
 * and the cursor (progress.ts). The unique transaction hash is what makes crediting exactly-once.
 * The operator settles an unmatched one (settle.ts): `assign` credits it to an account, `return`
 * records that the TON was sent back by hand (status `returned`, migration 0010-deposit-returns).
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

export function depositFromRow(row: DepositRow): Deposit {
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
export async function credit(
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

/**
 * The USDT deposits credited to an account in [from, to), oldest first: their conversion for a
 * monthly statement (src/statements/). `credited_at` is the time of their ledger credit.
 */
export async function usdtCreditedBetween(db: Kysely<Database>, accountId: string, from: number, to: number): Promise<Deposit[]> {
  const rows = await db
    .selectFrom('deposits')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', '=', 'credited')
    .where('asset', '=', 'USDT')
    .where('credited_at', '>=', BigInt(from))
    .where('credited_at', '<', BigInt(to))
    .orderBy('credited_at')
    .orderBy('id')
    .execute();
  return rows.map(depositFromRow);
}
