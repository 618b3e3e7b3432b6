/**
 * The operator settles an unmatched deposit (`starport deposit assign` / `deposit return`):
 * credits it to an account, or records that its TON went back to the sender by hand. Each
 * claims the row with a conditional UPDATE and commits its audit record with it.
 */
import { recordAudit } from '../audit/audit.js';
import type { Decimal } from '../domain/decimal.js';
import { formatTon } from '../domain/money.js';
import { formatDecimal, formatUsdt, usdtToNanotons } from '../domain/usdt.js';
import type { Db } from '../db/engine.js';
import type { DepositRow } from '../db/schema.js';
import { credit, type Deposit, depositFromRow, type UsdtRate } from './store.js';

export class AssignError extends Error {}

/** The console's person and address (audit source 'console'); absent for the CLI. */
export interface ConsoleActor {
  operatorId: string;
  ip: string;
}

const auditSource = (actor: ConsoleActor | undefined) => actor && { source: 'console' as const, operatorId: actor.operatorId, ip: actor.ip };

/**
 * The operator credits an unmatched deposit to an account (`deposit assign`): once only — the
 * row is claimed with a conditional UPDATE, so a second assign (or a concurrent one) finds it
 * already credited. The audit record commits with the credit.
 */
export async function assignDeposit(
  db: Db,
  input: {
    txHash: string;
    accountId: string;
    actor: string;
    reason?: string;
    usdt?: { rate: UsdtRate | undefined; spreadPercent: Decimal };
    console?: ConsoleActor;
  },
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
      ...auditSource(input.console),
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
export async function returnDeposit(db: Db, input: { txHash: string; actor: string; reason?: string; console?: ConsoleActor }, now = Date.now()): Promise<Deposit> {
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
      ...auditSource(input.console),
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
