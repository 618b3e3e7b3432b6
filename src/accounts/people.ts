import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { newId } from '../domain/random.js';

/**
 * People: who signs in to the dashboard, by e-mail (migration 0019-teams). A person belongs to
 * accounts through memberships (src/accounts/team.ts); an account's own e-mail is a person
 * too, its first owner.
 */
export interface Person {
  id: string;
  email: string;
  hasPassword: boolean;
  twoFactor: boolean;
}

export async function findPersonByEmail(db: Kysely<Database>, email: string): Promise<Person | undefined> {
  const row = await db.selectFrom('people').select(['id', 'email', 'password_hash', 'totp_enabled_at']).where('email', '=', email).executeTakeFirst();
  return row && { id: row.id, email: row.email, hasPassword: row.password_hash !== null, twoFactor: row.totp_enabled_at !== null };
}

/** The person with this (normalized) e-mail, created without a password when there is none. */
export async function ensurePerson(tx: Kysely<Database>, email: string, now: number): Promise<string> {
  await tx
    .insertInto('people')
    .values({ id: newId('psn'), email, password_hash: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('email').doNothing())
    .execute();
  const row = await tx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow();
  return row.id;
}
