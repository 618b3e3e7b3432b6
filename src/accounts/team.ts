import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database, TeamRole } from '../db/schema.js';
import { normalizeEmail } from './accounts.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { ensurePerson } from './people.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';
import { deleteMemberSessions } from './sessions.js';

/**
 * Teams: the people of an account and their roles (docs/dashboard.md, "Team and roles").
 *
 *   owner      everything, including the team, top-up settings and "require two-factor"
 *   developer  keys, webhooks, orders, test funds; no team or settings
 *   viewer     read only: balances, orders, history, deposits; never a key
 *
 * Every account keeps at least one owner: removing or demoting the last one is refused, with
 * the account row locked so that two owners removing each other cannot both succeed.
 */
export const TEAM_ROLES = ['owner', 'developer', 'viewer'] as const satisfies readonly TeamRole[];
const INVITE_TTL_MS = 72 * 60 * 60 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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

async function lockAccount(db: Db, tx: Kysely<Database>, accountId: string): Promise<void> {
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
 * their next request is signed out. `within` runs in that transaction (the audit record).
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
    const removed = { email: member.email, role: member.role };
    await within?.(tx, removed);
    return removed;
  });
}

/** Changes a member's role; the last owner cannot be demoted. */
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
    const change = { email: member.email, from: member.role };
    await within?.(tx, change);
    return change;
  });
}

export interface Invite {
  token: string;
  email: string;
  role: TeamRole;
  expiresAt: number;
}

/**
 * A one-time invite link for an e-mail to join the account with a role, valid 72 hours. No
 * mail is sent: the owner passes the link on. A new invite for the same e-mail replaces an
 * earlier unused one.
 */
export async function createInvite(
  db: Db,
  input: { accountId: string; email: string; role: TeamRole; invitedBy: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>) => Promise<unknown>,
): Promise<Invite> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email) || email.length > 254) throw new TeamError('Enter a valid e-mail address, like you@example.com.');
  if (!isTeamRole(input.role)) throw new TeamError('Choose a role: owner, developer or viewer.');
  const token = newSecret();
  const expiresAt = now + INVITE_TTL_MS;
  await db.kysely.transaction().execute(async (tx) => {
    const existing = await tx
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select('p.id')
      .where('m.account_id', '=', input.accountId)
      .where('p.email', '=', email)
      .executeTakeFirst();
    if (existing) throw new TeamError(`${email} is already a member of this account.`);
    await tx.updateTable('team_invites').set({ used_at: now }).where('account_id', '=', input.accountId).where('email', '=', email).where('used_at', 'is', null).execute();
    await tx
      .insertInto('team_invites')
      .values({
        token_hash: hashSecret(token),
        account_id: input.accountId,
        email,
        role: input.role,
        invited_by: input.invitedBy,
        created_at: now,
        expires_at: expiresAt,
        used_at: null,
      })
      .execute();
    await within?.(tx);
  });
  return { token, email, role: input.role, expiresAt };
}

export interface PendingInvite {
  accountId: string;
  accountEmail: string;
  email: string;
  role: TeamRole;
  /** The invited e-mail already signs in (with a password): they accept while signed in. */
  hasLogin: boolean;
}

export async function checkInvite(db: Db, token: unknown, now = Date.now()): Promise<PendingInvite | undefined> {
  if (!isSecretFormat(token)) return undefined;
  const row = await db.kysely
    .selectFrom('team_invites as i')
    .innerJoin('accounts as a', 'a.id', 'i.account_id')
    .leftJoin('people as p', 'p.email', 'i.email')
    .select(['i.account_id', 'a.email as account_email', 'i.email', 'i.role', 'p.password_hash'])
    .where('i.token_hash', '=', hashSecret(token))
    .where('i.used_at', 'is', null)
    .where('i.expires_at', '>', BigInt(now))
    .where('a.status', '=', 'active')
    .executeTakeFirst();
  return row && { accountId: row.account_id, accountEmail: row.account_email, email: row.email, role: row.role, hasLogin: !!row.password_hash };
}

export type AcceptInviteResult =
  | { ok: true; accountId: string; personId: string; email: string; role: TeamRole }
  | { ok: false; reason: 'invalid_link' | 'weak_password' | 'wrong_person'; message: string };

/**
 * Spends an invite (one conditional update: it works once) and adds the membership. Either the
 * invited person is signed in (`personId`, whose e-mail must be the invited one), or the
 * invited e-mail has no password yet and `password` sets it.
 */
export async function acceptInvite(
  db: Db,
  token: unknown,
  how: { personId: string } | { password: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>, accepted: { accountId: string; personId: string; email: string; role: TeamRole }) => Promise<unknown>,
): Promise<AcceptInviteResult> {
  const invalid = { ok: false, reason: 'invalid_link', message: 'This invite is invalid, already used or expired. Ask the account owner for a new one.' } as const;
  const pending = await checkInvite(db, token, now);
  if (!pending) return invalid;
  let passwordHash: string | undefined;
  if ('password' in how) {
    if (pending.hasLogin) return { ok: false, reason: 'wrong_person', message: `Log in as ${pending.email} first, then open the invite again.` };
    const weak = passwordProblem(how.password);
    if (weak) return { ok: false, reason: 'weak_password', message: weak };
    passwordHash = await hashPassword(how.password);
  }
  const tokenHash = hashSecret(token as string);
  return db.kysely
    .transaction()
    .execute(async (tx) => {
      let personId: string;
      if ('personId' in how) {
        const person = await tx.selectFrom('people').select('email').where('id', '=', how.personId).executeTakeFirst();
        if (person?.email !== pending.email)
          return { ok: false, reason: 'wrong_person', message: `This invite is for ${pending.email}. Log out and log in as that address to accept it.` } as const;
        personId = how.personId;
      } else {
        personId = await ensurePerson(tx, pending.email, now);
        // Only a person without a password gets one here (checked again inside the transaction).
        const set = await tx
          .updateTable('people')
          .set({ password_hash: passwordHash ?? null, updated_at: now })
          .where('id', '=', personId)
          .where('password_hash', 'is', null)
          .executeTakeFirst();
        if (set.numUpdatedRows !== 1n) return { ok: false, reason: 'wrong_person', message: `Log in as ${pending.email} first, then open the invite again.` } as const;
      }
      const spent = await tx
        .updateTable('team_invites')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', BigInt(now))
        .executeTakeFirst();
      if (spent.numUpdatedRows !== 1n) throw new InviteSpent();
      await tx
        .insertInto('memberships')
        .values({ account_id: pending.accountId, person_id: personId, role: pending.role, created_at: now })
        .onConflict((oc) => oc.columns(['account_id', 'person_id']).doNothing())
        .execute();
      const accepted = { accountId: pending.accountId, personId, email: pending.email, role: pending.role };
      await within?.(tx, accepted);
      return { ok: true, ...accepted } as const;
    })
    .catch((error: unknown) => {
      if (error instanceof InviteSpent) return invalid;
      throw error;
    });
}

/** Rolls back a password set for an invite that another request spent first. */
class InviteSpent extends Error {}

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
