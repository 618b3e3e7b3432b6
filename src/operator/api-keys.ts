import { reissueKey } from '../accounts/accounts.js';
import { type KeyRevocation, revokeKey } from '../accounts/admin.js';
import { recordAudit } from '../audit/audit.js';
import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';
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

/** The audit row of the action, written by the key's own transaction: the prefix under `detail`, never the key. */
const audited = (input: KeyAction, action: 'key.revoke' | 'key.reissue', detail: 'key_prefix' | 'new_key_prefix', now: number) => (tx: Kysely<Database>, prefix: string) =>
  recordAudit(tx, {
    actor: input.actor,
    ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
    action,
    accountId: input.accountId,
    mode: input.mode,
    reason: input.reason,
    details: { [detail]: prefix },
    now,
  });

/** Revokes the active key of the mode; `revokedPrefix` null when there was none (nothing written). */
export function operatorRevokeKey(db: Db, input: KeyAction, now = Date.now()): Promise<KeyRevocation> {
  return revokeKey(db, input.accountId, input.mode, now, audited(input, 'key.revoke', 'key_prefix', now));
}

/** Issues a new key of the mode (the previous one revoked at once) and returns it: the caller shows it once. */
export function operatorReissueKey(db: Db, input: KeyAction, now = Date.now()): Promise<string> {
  return reissueKey(db, input.accountId, input.mode, now, audited(input, 'key.reissue', 'new_key_prefix', now));
}
