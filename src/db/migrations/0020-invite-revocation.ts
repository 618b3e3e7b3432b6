import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * `team_invites.revoked_at` and `revoked_reason`: an invite can be voided before it is used — by
 * an owner (revoke), or because the owner who made it was removed or demoted (an invite never
 * outlives its inviter's authority; docs/dashboard.md "Team and roles"). The reason is shown to
 * whoever opens the link. Pending invites whose inviter is no longer an owner of the account are
 * voided here, as removal and demotion void them from now on.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('team_invites').addColumn('revoked_at', 'bigint').execute();
  await db.schema.alterTable('team_invites').addColumn('revoked_reason', 'text').execute();
  await db
    .updateTable('team_invites')
    .set({ revoked_at: Date.now(), revoked_reason: 'The person who sent it is no longer an owner of the account.' })
    .where('used_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('memberships as m')
            .select(sql`1`.as('one'))
            .whereRef('m.account_id', '=', 'team_invites.account_id')
            .whereRef('m.person_id', '=', 'team_invites.invited_by')
            .where('m.role', '=', 'owner'),
        ),
      ),
    )
    .execute();
}
