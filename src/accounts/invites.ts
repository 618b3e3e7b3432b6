import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database, TeamRole } from '../db/schema.js';
import { newId } from '../domain/random.js';
import { readableTime } from '../domain/time.js';
import { enqueueMail, isMailAddress } from '../notifications/outbox.js';
import { normalizeEmail } from './accounts.js';
import { releaseOwnedAccounts } from './email-verification.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';
import { INVITER_DEMOTED, INVITER_REMOVED, isTeamRole, lockAccount, TeamError, voidInvites } from './team.js';

/**
 * Team invites (docs/dashboard.md, "Team and roles"): a one-time link for an e-mail to join an
 * account with a role, e-mailed and shown once to the owner who made it, valid 72 hours; listed
 * for every owner, resent or revoked; accepted by a signed-in person with that e-mail, or by a
 * new person this invite creates. The token is stored as its SHA-256 only.
 */
const INVITE_TTL_MS = 72 * 60 * 60 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export interface Invite {
  token: string;
  email: string;
  role: TeamRole;
  expiresAt: number;
}

/**
 * A one-time invite link for an e-mail to join the account with a role, valid 72 hours. The
 * dashboard e-mails it (queueInviteMail, in `within`) and shows it to the owner once. A new invite for the same e-mail replaces an
 * earlier unused one. Only an owner invites; the invite lives only as long as its inviter stays
 * an owner (removal or demotion voids it, and accepting checks it again).
 */
export async function createInvite(
  db: Db,
  input: { accountId: string; email: string; role: TeamRole; invitedBy: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>, invite: Invite) => Promise<unknown>,
): Promise<Invite> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email) || !isMailAddress(email)) throw new TeamError('Enter a valid e-mail address, like you@example.com.');
  if (!isTeamRole(input.role)) throw new TeamError('Choose a role: owner, developer or viewer.');
  return db.kysely.transaction().execute(async (tx) => {
    const existing = await tx
      .selectFrom('memberships as m')
      .innerJoin('people as p', 'p.id', 'm.person_id')
      .select('p.id')
      .where('m.account_id', '=', input.accountId)
      .where('p.email', '=', email)
      .executeTakeFirst();
    if (existing) throw new TeamError(`${email} is already a member of this account.`);
    await voidInvites(tx, { accountId: input.accountId, email }, 'A newer invite for the same address replaced it.', now);
    const invite = await insertInvite(tx, { accountId: input.accountId, email, role: input.role, invitedBy: input.invitedBy }, now);
    await within?.(tx, invite);
    return invite;
  });
}

/** A new pending invite with a new token, valid INVITE_TTL_MS from `now` (only its hash is stored). */
async function insertInvite(tx: Kysely<Database>, input: { accountId: string; email: string; role: TeamRole; invitedBy: string }, now: number): Promise<Invite> {
  const token = newSecret();
  const invite = { token, email: input.email, role: input.role, expiresAt: now + INVITE_TTL_MS };
  await tx
    .insertInto('team_invites')
    .values({
      token_hash: hashSecret(token),
      account_id: input.accountId,
      email: input.email,
      role: input.role,
      invited_by: input.invitedBy,
      created_at: now,
      expires_at: invite.expiresAt,
      used_at: null,
      revoked_at: null,
      revoked_reason: null,
    })
    .execute();
  return invite;
}

/**
 * Sends a pending invite again with a new link (the old link stops working: it is voided with
 * the reason its page will show). The owner who resends becomes its sender; it is valid 72
 * hours from now. Undefined when the invite is no longer pending. `within` runs in the same
 * transaction (the audit record and the mail).
 */
export async function resendInvite(
  db: Db,
  accountId: string,
  id: string,
  by: { personId: string; email: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>, invite: Invite) => Promise<unknown>,
): Promise<Invite | undefined> {
  return db.kysely.transaction().execute(async (tx) => {
    const old = await tx
      .selectFrom('team_invites')
      .select(['email', 'role'])
      .where('token_hash', '=', id)
      .where('account_id', '=', accountId)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', BigInt(now))
      .executeTakeFirst();
    if (!old) return undefined;
    const voided = await tx
      .updateTable('team_invites')
      .set({ revoked_at: now, revoked_reason: `${by.email} sent a new link, which replaced it.` })
      .where('token_hash', '=', id)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (voided.numUpdatedRows !== 1n) return undefined;
    const invite = await insertInvite(tx, { accountId, email: old.email, role: old.role, invitedBy: by.personId }, now);
    await within?.(tx, invite);
    return invite;
  });
}

/**
 * Queues the invite's e-mail in the caller's transaction: who invites, to which account, with
 * which role, and the link (a secret: never listed or logged). An address whose person still
 * waits for its verification link gets nothing but that link: no invite mail then (the owner
 * still has the link to pass on). Returns whether a mail was queued.
 */
export async function queueInviteMail(
  tx: Kysely<Database>,
  input: { accountId: string; accountEmail: string; inviter: string; invite: Invite; link: string; brand: string },
  now = Date.now(),
): Promise<boolean> {
  const person = await tx.selectFrom('people').select('email_unverified_since').where('email', '=', input.invite.email).executeTakeFirst();
  if (person && person.email_unverified_since !== null) return false;
  await enqueueMail(
    tx,
    {
      to: input.invite.email,
      topic: 'team_invite',
      accountId: input.accountId,
      secrets: [input.invite.token],
      message: {
        subject: `You are invited to a ${input.brand} account`,
        parts: [
          `${input.inviter} invites you to join the ${input.brand} account ${input.accountEmail} as ${input.invite.role}.`,
          { link: input.link, label: 'Open the invite' },
          `The link works once, until ${readableTime(input.invite.expiresAt)}. If you do not know the sender, ignore this e-mail.`,
        ],
      },
    },
    now,
  );
  return true;
}

export interface PendingInvite {
  accountId: string;
  accountEmail: string;
  email: string;
  role: TeamRole;
  /**
   * A person with the invited e-mail already exists (with a password or still to set one): they
   * accept only while signed in as that person, never by choosing a password on the invite.
   */
  existingPerson: boolean;
}

export type InviteProblem = 'invalid' | 'used' | 'expired' | 'revoked' | 'account_disabled';

export type InviteLookup = { ok: true; invite: PendingInvite } | { ok: false; reason: InviteProblem; message: string };

const INVITE_INVALID = {
  ok: false,
  reason: 'invalid',
  message: 'This invite link is not valid. Check that you copied all of it, or ask the account owner for a new one.',
} as const;

/** The invite of a link token, or why it does not work (used, expired, revoked and why, unknown). */
export async function checkInvite(db: Db, token: unknown, now = Date.now()): Promise<InviteLookup> {
  if (!isSecretFormat(token)) return INVITE_INVALID;
  const row = await db.kysely
    .selectFrom('team_invites as i')
    .innerJoin('accounts as a', 'a.id', 'i.account_id')
    .leftJoin('people as p', 'p.email', 'i.email')
    .select(['i.account_id', 'a.email as account_email', 'a.status', 'i.email', 'i.role', 'i.expires_at', 'i.used_at', 'i.revoked_at', 'i.revoked_reason', 'p.id as person_id'])
    .where('i.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  if (!row) return INVITE_INVALID;
  if (row.used_at !== null) return { ok: false, reason: 'used', message: 'This invite was already used. If it was you, log in; otherwise ask the account owner for a new one.' };
  if (row.revoked_at !== null)
    return { ok: false, reason: 'revoked', message: `This invite was revoked. ${row.revoked_reason ?? ''} Ask an owner of the account for a new one.`.replace('  ', ' ') };
  if (Number(row.expires_at) <= now) {
    return { ok: false, reason: 'expired', message: `This invite expired on ${readableTime(Number(row.expires_at))}. Ask the account owner for a new one.` };
  }
  if (row.status !== 'active') return { ok: false, reason: 'account_disabled', message: 'This invite no longer works: the account it is for is disabled.' };
  return { ok: true, invite: { accountId: row.account_id, accountEmail: row.account_email, email: row.email, role: row.role, existingPerson: row.person_id !== null } };
}

export interface PendingInviteRow {
  /** The token's hash: names the invite in the revoke form (the token itself is never stored). */
  id: string;
  email: string;
  role: TeamRole;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
}

/** The account's invites still waiting to be used, newest first, for every owner to see and revoke. */
export async function listPendingInvites(db: Kysely<Database>, accountId: string, now = Date.now()): Promise<PendingInviteRow[]> {
  const rows = await db
    .selectFrom('team_invites as i')
    .leftJoin('people as p', 'p.id', 'i.invited_by')
    .select(['i.token_hash', 'i.email', 'i.role', 'p.email as inviter', 'i.invited_by', 'i.created_at', 'i.expires_at'])
    .where('i.account_id', '=', accountId)
    .where('i.used_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', BigInt(now))
    .orderBy('i.created_at', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.token_hash,
    email: r.email,
    role: r.role,
    invitedBy: r.inviter ?? r.invited_by,
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
  }));
}

/** An owner revokes a pending invite of their account; false when it was no longer pending. */
export async function revokeInvite(
  db: Db,
  accountId: string,
  id: string,
  by: string,
  now = Date.now(),
  within?: (tx: Kysely<Database>, revoked: { email: string; role: TeamRole }) => Promise<unknown>,
): Promise<boolean> {
  return db.kysely.transaction().execute(async (tx) => {
    const invite = await tx
      .selectFrom('team_invites')
      .select(['email', 'role'])
      .where('token_hash', '=', id)
      .where('account_id', '=', accountId)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!invite) return false;
    const done = await tx
      .updateTable('team_invites')
      .set({ revoked_at: now, revoked_reason: `${by} revoked it.` })
      .where('token_hash', '=', id)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (done.numUpdatedRows !== 1n) return false;
    await within?.(tx, invite);
    return true;
  });
}

export type AcceptInviteResult =
  | { ok: true; accountId: string; personId: string; email: string; role: TeamRole }
  | { ok: false; reason: InviteProblem | 'weak_password' | 'wrong_person'; message: string };

/** Someone with the invited address exists: a password chosen on the invite would be theirs. */
const existingPersonMessage = (email: string, brand: string) =>
  `This invite is for ${email}, who already has a ${brand} login: log in as ${email} (or first set its password with the link you were given), then open this invite again.`;

/**
 * Spends an invite (one conditional update: it works once) and adds the membership. Either the
 * invited person is signed in (`personId`, whose e-mail must be the invited one), or no person
 * with the invited e-mail exists yet and this invite creates them with `password`. An invite
 * never sets or changes the password of a person who already exists (docs/security.md). The
 * inviter must still be an owner of the account when it is accepted (checked with the account
 * locked, as removal and demotion lock it).
 */
export async function acceptInvite(
  db: Db,
  token: unknown,
  how: { personId: string } | { password: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>, accepted: { accountId: string; personId: string; email: string; role: TeamRole }) => Promise<unknown>,
  brand = DEFAULT_BRAND_NAME,
): Promise<AcceptInviteResult> {
  const lookup = await checkInvite(db, token, now);
  if (!lookup.ok) return lookup;
  const pending = lookup.invite;
  let passwordHash: string | undefined;
  if ('password' in how) {
    if (pending.existingPerson) return { ok: false, reason: 'wrong_person', message: existingPersonMessage(pending.email, brand) };
    const weak = passwordProblem(how.password);
    if (weak) return { ok: false, reason: 'weak_password', message: weak };
    passwordHash = await hashPassword(how.password);
  }
  const tokenHash = hashSecret(token as string);
  const outcome = await db.kysely
    .transaction()
    .execute(async (tx): Promise<AcceptInviteResult | 'spent'> => {
      await lockAccount(db, tx, pending.accountId);
      const invite = await tx.selectFrom('team_invites').select('invited_by').where('token_hash', '=', tokenHash).executeTakeFirstOrThrow();
      const inviter = await tx.selectFrom('memberships').select('role').where('account_id', '=', pending.accountId).where('person_id', '=', invite.invited_by).executeTakeFirst();
      if (inviter?.role !== 'owner') {
        await voidInvites(tx, { accountId: pending.accountId, invitedBy: invite.invited_by }, inviter ? INVITER_DEMOTED : INVITER_REMOVED, now);
        return 'spent';
      }
      let personId: string;
      if ('personId' in how) {
        const person = await tx.selectFrom('people').select('email').where('id', '=', how.personId).executeTakeFirst();
        if (person?.email !== pending.email)
          return { ok: false, reason: 'wrong_person', message: `This invite is for ${pending.email}. Log out and log in as that address to accept it.` };
        personId = how.personId;
      } else {
        // Only a person this very invite creates chooses a password here (checked again inside
        // the transaction; a concurrent creation of the same e-mail fails the insert).
        if (await tx.selectFrom('people').select('id').where('email', '=', pending.email).executeTakeFirst()) {
          return { ok: false, reason: 'wrong_person', message: existingPersonMessage(pending.email, brand) };
        }
        personId = newId('psn');
        await tx
          .insertInto('people')
          .values({ id: personId, email: pending.email, password_hash: passwordHash ?? null, created_at: now, updated_at: now })
          .execute();
      }
      const spent = await tx
        .updateTable('team_invites')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', BigInt(now))
        .executeTakeFirst();
      if (spent.numUpdatedRows !== 1n) throw new InviteSpent();
      await tx
        .insertInto('memberships')
        .values({ account_id: pending.accountId, person_id: personId, role: pending.role, created_at: now })
        .onConflict((oc) => oc.columns(['account_id', 'person_id']).doNothing())
        .execute();
      if (pending.role === 'owner') await releaseOwnedAccounts(tx, personId);
      const accepted = { accountId: pending.accountId, personId, email: pending.email, role: pending.role };
      await within?.(tx, accepted);
      return { ok: true, ...accepted };
    })
    .catch((error: unknown) => {
      if (error instanceof InviteSpent) return 'spent' as const;
      // Two acceptances creating the same person at once: the loser's insert is refused.
      if (db.engine.isUniqueViolation(error)) return { ok: false, reason: 'wrong_person', message: existingPersonMessage(pending.email, brand) } as const;
      throw error;
    });
  if (outcome !== 'spent') return outcome;
  // Spent, revoked or expired meanwhile: say which.
  const after = await checkInvite(db, token, now);
  return after.ok ? INVITE_INVALID : after;
}

/** Rolls back a person created for an invite that another request spent first. */
class InviteSpent extends Error {}
