import { randomBytes } from 'node:crypto';
import type { Db } from '../db/engine.js';

/** The dashboard's HMAC key (CSRF tokens). */
export function dashboardSecret(db: Db, now = Date.now()): Promise<Buffer> {
  return storedSecret(db, 'csrf_hmac_key', now);
}

/**
 * A service HMAC key, generated once and kept in the database (table dashboard_secrets), so
 * that every node of a scaled-out deployment agrees on it without configuration. Concurrent
 * first starts race on the primary key; all of them then read the winner's value.
 */
export async function storedSecret(db: Db, name: string, now = Date.now()): Promise<Buffer> {
  const read = () => db.kysely.selectFrom('dashboard_secrets').select('value').where('name', '=', name).executeTakeFirst();
  let row = await read();
  if (!row) {
    await db.kysely
      .insertInto('dashboard_secrets')
      .values({ name, value: randomBytes(32).toString('base64'), created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    row = await read();
  }
  if (!row) throw new Error(`the secret ${name} could not be stored`);
  return Buffer.from(row.value, 'base64');
}
