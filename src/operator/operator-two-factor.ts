import { checkTotp, type Enrolment, newTotpSecret, totpUri } from '../accounts/two-factor.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';

/**
 * The console's two-factor sign-in: TOTP with the dashboard's parameters (checkTotp,
 * src/accounts/two-factor.ts), required of every operator from the first sign-in. A code works
 * once: the accepted time step is stored by a conditional update, so two requests with the
 * same code cannot both pass. Moving money asks for a code again (verifyOperatorCode).
 */

/** The enrolment in progress, started on the first visit of the enrolment page. */
export async function operatorEnrolment(db: Db, operatorId: string, email: string, now = Date.now()): Promise<Enrolment | undefined> {
  const row = await db.kysely.selectFrom('operators').select(['totp_secret', 'totp_enabled_at']).where('id', '=', operatorId).executeTakeFirst();
  if (!row || row.totp_enabled_at !== null) return undefined;
  if (row.totp_secret) return { secret: row.totp_secret, uri: totpUri(email, row.totp_secret) };
  const secret = newTotpSecret();
  const updated = await db.kysely
    .updateTable('operators')
    .set({ totp_secret: secret, totp_last_step: null, updated_at: now })
    .where('id', '=', operatorId)
    .where('totp_enabled_at', 'is', null)
    .where('totp_secret', 'is', null)
    .executeTakeFirst();
  // Another tab started it first: show theirs.
  if (updated.numUpdatedRows !== 1n) return operatorEnrolment(db, operatorId, email, now);
  return { secret, uri: totpUri(email, secret) };
}

/** Two-factor is on once a code of the pending secret is confirmed; false when the code is wrong. */
export async function confirmOperatorEnrolment(db: Db, operatorId: string, code: string, ip: string, now = Date.now()): Promise<boolean> {
  const row = await db.kysely.selectFrom('operators').select(['email', 'totp_secret', 'totp_enabled_at', 'totp_last_step']).where('id', '=', operatorId).executeTakeFirst();
  if (!row?.totp_secret || row.totp_enabled_at !== null) return false;
  const step = await checkTotp(row.totp_secret, code.replace(/\s+/g, ''), row.totp_last_step, now);
  if (step === undefined) return false;
  return db.kysely.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('operators')
      .set({ totp_enabled_at: now, totp_last_step: step, updated_at: now })
      .where('id', '=', operatorId)
      .where('totp_enabled_at', 'is', null)
      .where('totp_secret', '=', row.totp_secret)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return false;
    await recordAudit(tx, { actor: row.email, source: 'console', operatorId, ip, action: 'operator.two_factor_enable', now });
    return true;
  });
}

/** Checks and spends a code of an enrolled operator (sign-in, and again before moving money). */
export async function verifyOperatorCode(db: Db, operatorId: string, code: string, now = Date.now()): Promise<boolean> {
  const row = await db.kysely.selectFrom('operators').select(['totp_secret', 'totp_enabled_at', 'totp_last_step']).where('id', '=', operatorId).executeTakeFirst();
  if (!row?.totp_secret || row.totp_enabled_at === null) return false;
  const step = await checkTotp(row.totp_secret, code.replace(/\s+/g, ''), row.totp_last_step, now);
  if (step === undefined) return false;
  const taken = await db.kysely
    .updateTable('operators')
    .set({ totp_last_step: step })
    .where('id', '=', operatorId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', BigInt(step))]))
    .executeTakeFirst();
  return taken.numUpdatedRows === 1n;
}
