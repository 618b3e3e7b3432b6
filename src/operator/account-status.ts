import { type AccountStatus, type StatusChange, setAccountStatus } from '../accounts/admin.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';

/**
 * Disables or enables an account with a reason, audited in the same transaction: one function
 * for `starport account disable|enable` and the console's account page.
 */
export function operatorSetStatus(
  db: Db,
  input: { accountId: string; status: AccountStatus; reason: string; actor: string; console?: { operatorId: string; ip: string } },
  now = Date.now(),
): Promise<StatusChange> {
  const action = input.status === 'disabled' ? 'account.disable' : 'account.enable';
  return setAccountStatus(db, input.accountId, input.status, (tx, change) =>
    recordAudit(tx, {
      actor: input.actor,
      ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
      action,
      accountId: input.accountId,
      reason: input.reason,
      details: { from: change.from, to: change.to },
      now,
    }),
  );
}
