import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database, TeamRole } from '../db/schema.js';
import { normalizeEmail } from './accounts.js';
import { deleteMemberSessions } from './sessions.js';
import { releaseOwnedAccounts } from './email-verification.js';

/**
 * Teams: the people of an account and their roles (docs/dashboard.md, "Team and roles").
 *
 *   owner      everything, including the team, top-up settings and "require two-factor"
 *   developer  keys, webhooks, orders, test funds; no team or settings
 *   viewer     read only: balances, orders, history, deposits; never a key
 *
 * Every account keeps at least one owner: removing or demoting the last one is refused, with
 * the account row locked so that two owners removing each other cannot both succeed. Invites
 * are in invites.ts; removal and demotion void the invites the member sent (voidInvites).
 */
export const TEAM_ROLES = ['owner', 'developer', 'viewer'] as const satisfies readonly TeamRole[];

export function isTeamRole(value: unknown): value is TeamRole {
  return (TEAM_ROLES as readonly unknown[]).includes(value);
}

export interface Member {
  personId: string;
  email: string;
  role: TeamRole;
  since: number;
  twoFactor: boolean;
}

export async function listMembers(db: Kysely<Database>, accountId: string): Promise<Member[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('people as p', 'p.id', 'm.person_id')
    .select(['p.id', 'p.email', 'm.role', 'm.created_at', 'p.totp_enabled_at'])
    .where('m.account_id', '=', accountId)
    .orderBy('m.created_at')
    .orderBy('p.email')
    .execute();
  return rows.map((r) => ({ personId: r.id, email: r.email, role: r.role, since: Number(r.created_at), twoFactor: r.totp_enabled_at !== null }));
}

export interface Membership {
  accountId: string;
  accountEmail: string;
  role: TeamRole;
}

/** The active accounts a person may switch to. */
export async function listMemberships(db: Kysely<Database>, personId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.email', 'm.role'])
    .where('m.person_id', '=', personId)
    .where('a.status', '=', 'active')
    .orderBy('a.email')
    .execute();
  return rows.map((r) => ({ accountId: r.id, accountEmail: r.email, role: r.role }));
}

export class TeamError extends Error {}

export async function lockAccount(db: Db, tx: Kysely<Database>, accountId: string): Promise<void> {
  const account = await db.engine.lockForUpdate(tx.selectFrom('accounts').select('id').where('id', '=', accountId)).executeTakeFirst();
  if (!account) throw new TeamError(`no account ${accountId}`);
}

async function ownerCount(tx: Kysely<Database>, accountId: string): Promise<number> {
  const row = await tx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return Number(String(row?.n ?? 0));
}

/** The member's e-mail and role, read after locking the account (the owner count must not move under a change). */
async function lockedMember(db: Db, tx: Kysely<Database>, accountId: string, personId: string): Promise<{ email: string; role: TeamRole }> {
  await lockAccount(db, tx, accountId);
  const member = await tx
    .selectFrom('memberships as m')
    .innerJoin('people as p', 'p.id', 'm.person_id')
    .select(['p.email', 'm.role'])
    .where('m.account_id', '=', accountId)
    .where('m.person_id', '=', personId)
    .executeTakeFirst();
  if (!member) throw new TeamError('not a member of this account');
  return member;
}

/**
 * Removes a person from an account and ends their sessions on it in the same transaction, so
 * their next request is signed out; the invites they sent that are still pending are voided. `within` runs in that transaction (the audit record).
 */
export async function removeMember(
  db: Db,
  accountId: string,
  personId: string,
  within?: (tx: Kysely<Database>, removed: { email: string; role: TeamRole }) => Promise<unknown>,
): Promise<{ email: string; role: TeamRole }> {
  return db.kysely.transaction().execute(async (tx) => {
    const member = await lockedMember(db, tx, accountId, personId);
    if (member.role === 'owner' && (await ownerCount(tx, accountId)) <= 1) throw new TeamError('an account keeps at least one owner: make another member owner first');
    await tx.deleteFrom('memberships').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
    await deleteMemberSessions(tx, accountId, personId);
    await voidInvites(tx, { accountId, invitedBy: personId }, INVITER_REMOVED, Date.now());
    const removed = { email: member.email, role: member.role };
    await within?.(tx, removed);
    return removed;
  });
}

/** Changes a member's role; the last owner cannot be demoted; a demoted owner's pending invites are voided. */
export async function changeRole(
  db: Db,
  accountId: string,
  personId: string,
  role: TeamRole,
  within?: (tx: Kysely<Database>, change: { email: string; from: TeamRole }) => Promise<unknown>,
): Promise<{ email: string; from: TeamRole }> {
  return db.kysely.transaction().execute(async (tx) => {
    const member = await lockedMember(db, tx, accountId, personId);
    if (member.role === 'owner' && role !== 'owner' && (await ownerCount(tx, accountId)) <= 1) {
      throw new TeamError('an account keeps at least one owner: make another member owner first');
    }
    await tx.updateTable('memberships').set({ role }).where('account_id', '=', accountId).where('person_id', '=', personId).execute();
    if (member.role === 'owner' && role !== 'owner') await voidInvites(tx, { accountId, invitedBy: personId }, INVITER_DEMOTED, Date.now());
    if (role === 'owner') await releaseOwnedAccounts(tx, personId);
    const change = { email: member.email, from: member.role };
    await within?.(tx, change);
    return change;
  });
}

/** Why an invite voided by its inviter's loss of authority no longer works (shown on the link). */
export const INVITER_REMOVED = 'The owner who sent it was removed from the account.';
export const INVITER_DEMOTED = 'The person who sent it is no longer an owner of the account.';

/** Voids the unused invites of an account, all of one e-mail or all of one inviter, with the reason shown on their links. */
export async function voidInvites(tx: Kysely<Database>, which: { accountId: string; email?: string; invitedBy?: string }, reason: string, now: number): Promise<void> {
  let query = tx
    .updateTable('team_invites')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('account_id', '=', which.accountId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null);
  if (which.email !== undefined) query = query.where('email', '=', which.email);
  if (which.invitedBy !== undefined) query = query.where('invited_by', '=', which.invitedBy);
  await query.execute();
}

/** The person with this e-mail who is a member of the account, for the CLI. */
export async function findMember(db: Kysely<Database>, accountId: string, email: string): Promise<Member | undefined> {
  const normalized = normalizeEmail(email);
  return (await listMembers(db, accountId)).find((m) => m.email === normalized);
}

/** An owner's "require two-factor of every member": on (since `now`) or off. */
export async function setTwoFactorRequired(db: Db, accountId: string, required: boolean, now: number, within?: (tx: Kysely<Database>) => Promise<unknown>): Promise<void> {
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .updateTable('accounts')
      .set({ two_factor_required_at: required ? now : null })
      .where('id', '=', accountId)
      .execute();
    await within?.(tx);
  });
}
