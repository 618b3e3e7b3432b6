import type { Db } from '../db/engine.js';
import type { OperatorRole, OperatorSessionsTable } from '../db/schema.js';
import { hashSecret, isSecretFormat, newSecret } from '../accounts/secrets.js';

/**
 * The operator console's sessions (table operator_sessions), apart from the dashboard's: the
 * browser holds a random 256-bit id, the table its SHA-256. A session ends on sign-out, after
 * OPERATOR_IDLE_MS without a request or OPERATOR_MAX_AGE_MS after the sign-in. Before it is
 * `active` it reaches only the two-factor forms: `enrol` (password given, no two-factor yet) and
 * `second_factor` (password given, code expected), each for OPERATOR_STAGE_MS.
 */
export const OPERATOR_IDLE_MS = 60 * 60 * 1000;
export const OPERATOR_MAX_AGE_MS = 12 * 60 * 60 * 1000;
const OPERATOR_STAGE_MS = 10 * 60 * 1000;
const TOUCH_AFTER_MS = 60 * 1000;

export type OperatorStage = OperatorSessionsTable['stage'];

export interface OperatorSession {
  idHash: string;
  operatorId: string;
  email: string;
  role: OperatorRole;
  stage: OperatorStage;
  secondFactorAt: number | undefined;
}

/** A new session (always a new id); expired ones are swept. */
export async function createOperatorSession(db: Db, operatorId: string, stage: OperatorStage, now = Date.now()): Promise<{ id: string; idHash: string }> {
  const id = newSecret();
  const idHash = hashSecret(id);
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('operator_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', BigInt(now)), eb('last_seen_at', '<=', BigInt(now - OPERATOR_IDLE_MS))]))
      .execute();
    await tx
      .insertInto('operator_sessions')
      .values({
        id_hash: idHash,
        operator_id: operatorId,
        stage,
        created_at: now,
        last_seen_at: now,
        expires_at: now + (stage === 'active' ? OPERATOR_MAX_AGE_MS : OPERATOR_STAGE_MS),
        second_factor_at: stage === 'active' ? now : null,
      })
      .execute();
  });
  return { id, idHash };
}

/** The live session of a console cookie, or undefined (unknown, expired, idle). */
export async function findOperatorSession(db: Db, id: unknown, now = Date.now()): Promise<OperatorSession | undefined> {
  if (!isSecretFormat(id)) return undefined;
  const idHash = hashSecret(id);
  const row = await db.kysely
    .selectFrom('operator_sessions as s')
    .innerJoin('operators as o', 'o.id', 's.operator_id')
    .select(['s.operator_id', 's.stage', 's.last_seen_at', 's.expires_at', 's.second_factor_at', 'o.email', 'o.role'])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return undefined;
  if (now >= Number(row.expires_at) || now - Number(row.last_seen_at) >= OPERATOR_IDLE_MS) {
    await deleteOperatorSession(db, idHash);
    return undefined;
  }
  if (now - Number(row.last_seen_at) >= TOUCH_AFTER_MS) {
    await db.kysely.updateTable('operator_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }
  return {
    idHash,
    operatorId: row.operator_id,
    email: row.email,
    role: row.role,
    stage: row.stage,
    secondFactorAt: row.second_factor_at === null ? undefined : Number(row.second_factor_at),
  };
}

export async function deleteOperatorSession(db: Db, idHash: string): Promise<void> {
  await db.kysely.deleteFrom('operator_sessions').where('id_hash', '=', idHash).execute();
}
