import { reissueKey } from '../accounts/accounts.js';
import { type KeyRevocation, revokeKey } from '../accounts/admin.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';
import type { Mode } from '../domain/api-key.js';

/**
 * An operator's revocation or reissue of an account's API key, audited in the same transaction:
 * one function each for `starport key revoke|reissue` and the console's account page. The audit
 * row carries the key's prefix, never the key.
 */
export interface KeyAction {
  accountId: string;
  mode: Mode;
  /** Required by the console and by `key revoke`; `key reissue` may go without. */
  reason: string | undefined;
  actor: string;
  /** The console's person and address (source 'console'); absent for the CLI. */
  console?: { operatorId: string; ip: string };
}

const source = (input: KeyAction) => input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip };

/** Revokes the active key of the mode; `revokedPrefix` null when there was none (nothing written). */
export function operatorRevokeKey(db: Db, input: KeyAction, now = Date.now()): Promise<KeyRevocation> {
  return revokeKey(db, input.accountId, input.mode, now, (tx, prefix) =>
    recordAudit(tx, {
      actor: input.actor,
      ...source(input),
      action: 'key.revoke',
      accountId: input.accountId,
      mode: input.mode,
      reason: input.reason,
      details: { key_prefix: prefix },
      now,
    }),
  );
}

/** Issues a new key of the mode (the previous one revoked at once) and returns it: the caller shows it once. */
export function operatorReissueKey(db: Db, input: KeyAction, now = Date.now()): Promise<string> {
  return reissueKey(db, input.accountId, input.mode, now, (tx, prefix) =>
    recordAudit(tx, {
      actor: input.actor,
      ...source(input),
      action: 'key.reissue',
      accountId: input.accountId,
      mode: input.mode,
      reason: input.reason,
      details: { new_key_prefix: prefix },
      now,
    }),
  );
}
