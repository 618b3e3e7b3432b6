import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * At most one message in flight (signed or broadcast) per paying wallet, enforced by the
 * database as well as by the sender. The sender already guarantees it: a message is inserted
 * only as `signed`, under the wallet's lock (wallet_state), after checking that none of the
 * wallet's messages is in flight, and a message never returns to signed/broadcast once resolved
 * (confirmed, expired, held). This partial unique index makes a bug in that path fail the insert
 * instead of putting two messages — possibly with the same seqno — on the wire. SQLite and
 * PostgreSQL both support partial indexes with this syntax.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await sql`create unique index wallet_messages_one_in_flight on wallet_messages (wallet) where state in ('signed', 'broadcast')`.execute(db);
}
