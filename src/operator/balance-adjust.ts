import type { Db } from '../db/engine.js';
import { recordAudit } from '../audit/audit.js';
import type { Mode } from '../domain/api-key.js';
import { formatTon } from '../domain/money.js';
import { adjustBalance } from '../ledger/adjust.js';
import type { Balance } from '../ledger/ledger.js';

/**
 * An operator's credit or debit (journal kind `adjustment`, signed) with its audit record in the
 * same transaction: one function for `starport balance credit|debit` and the console's account
 * page. A debit never takes the available balance below zero (AdjustmentError, with the numbers).
 */
export interface Adjustment {
  accountId: string;
  mode: Mode;
  /** Signed nanotons: negative debits. */
  amount: bigint;
  reason: string;
  actor: string;
  action: 'balance.credit' | 'balance.debit';
  /** The console's person and address (source 'console'); absent for the CLI. */
  console?: { operatorId: string; ip: string };
}

export function operatorAdjust(db: Db, input: Adjustment, now = Date.now()): Promise<Balance> {
  return adjustBalance(db, { accountId: input.accountId, mode: input.mode, amount: input.amount, reason: input.reason }, now, (tx, after, before) =>
    recordAudit(tx, {
      actor: input.actor,
      ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
      action: input.action,
      accountId: input.accountId,
      mode: input.mode,
      reason: input.reason,
      details: {
        amount: formatTon(input.amount < 0n ? -input.amount : input.amount),
        signed_amount: formatTon(input.amount),
        available_before: formatTon(before.available),
        available_after: formatTon(after.available),
      },
      now,
    }),
  );
}
