import { AccountError, normalizeEmail } from '../accounts/accounts.js';
import { findPersonByEmail } from '../accounts/people.js';
import { listMemberships } from '../accounts/team.js';
import { resetTwoFactor } from '../accounts/two-factor.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';

export interface TwoFactorReset {
  email: string;
  /** Whether the person had two-factor on before. */
  wasOn: boolean;
  /** The accounts the person belongs to: each gets a `two_factor.reset` audit entry. */
  accounts: string[];
}

/**
 * Turns off the two-factor sign-in of a dashboard person who lost their device and recovery
 * codes and ends every session of theirs, audited (`two_factor.reset`) on every account they
 * belong to in the same transaction: one function for `starport account 2fa reset` and the
 * console's account page.
 */
export async function operatorResetTwoFactor(
  db: Db,
  input: { email: string; reason: string; actor: string; console?: { operatorId: string; ip: string } },
  now = Date.now(),
): Promise<TwoFactorReset> {
  const email = normalizeEmail(input.email);
  const person = await findPersonByEmail(db.kysely, email);
  if (!person) throw new AccountError(`no dashboard login with e-mail ${email}`);
  const accounts = await listMemberships(db.kysely, person.id);
  await db.kysely.transaction().execute(async (tx) => {
    await resetTwoFactor(tx, person.id, now);
    for (const m of accounts) {
      await recordAudit(tx, {
        actor: input.actor,
        ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
        action: 'two_factor.reset',
        accountId: m.accountId,
        reason: input.reason,
        details: { email, was_on: person.twoFactor },
        now,
      });
    }
  });
  return { email, wasOn: person.twoFactor, accounts: accounts.map((m) => m.accountId) };
}
