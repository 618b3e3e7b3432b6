import { AccountError, normalizeEmail } from '../../accounts/accounts.js';
import { findAccount } from '../../accounts/admin.js';
import { findMember, listMembers, removeMember, TeamError } from '../../accounts/team.js';
import { recordAudit } from '../../audit/audit.js';
import type { Command } from '../command.js';
import { required } from '../command.js';
import { withDatabase } from '../database.js';
import { operatorResetTwoFactor } from '../../operator/two-factor-reset.js';
import { ACTOR_HELP, actorOf, actorOption, operatorCommand, positional, reasonOf, table, time } from '../operator.js';

/**
 * The operator's view of teams (docs/operations.md, "Teams and two-factor"): who belongs to an
 * account, removing a member (their sessions end at once), and resetting the two-factor
 * sign-in of someone who lost both their device and their recovery codes. Changes are audited
 * and so appear in the account's activity log.
 */
export const accountMembers: Command = operatorCommand({
  path: ['account', 'members'],
  summary: 'List the people of an account: e-mail, role, two-factor, since when',
  usage: 'starport account members ACCOUNT_ID|EMAIL [--json]',
  options: {},
  positionals: ['account'],
  async run(values, io) {
    const idOrEmail = positional(values, 'account', 'ACCOUNT_ID (or the account e-mail)');
    const found = await withDatabase(async (db) => {
      const account = await findAccount(db.kysely, idOrEmail);
      return account && { account, members: await listMembers(db.kysely, account.id) };
    });
    if (!found) throw new AccountError(`no account ${idOrEmail}`);
    const members = found.members.map((m) => ({ email: m.email, role: m.role, two_factor: m.twoFactor, since: time(m.since) }));
    io.result(
      { account_id: found.account.id, members },
      `account ${found.account.id}  ${found.account.email}\n` +
        table(
          ['E-MAIL', 'ROLE', 'TWO-FACTOR', 'SINCE'],
          members.map((m) => [m.email, m.role, m.two_factor ? 'on' : 'off', m.since]),
        ),
    );
    return 0;
  },
});

export const accountMemberRemove: Command = operatorCommand({
  path: ['account', 'member', 'remove'],
  summary: 'Remove a person from an account; their dashboard sessions on it end at once',
  usage: `starport account member remove ACCOUNT_ID --email EMAIL --reason TEXT [--actor NAME] [--json]\n\nThe last owner cannot be removed.\n${ACTOR_HELP}`,
  options: { email: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  positionals: ['account'],
  async run(values, io) {
    const accountId = positional(values, 'account', 'ACCOUNT_ID');
    const email = normalizeEmail(required(values, 'email'));
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const removed = await withDatabase(async (db) => {
      const member = await findMember(db.kysely, accountId, email);
      if (!member) throw new AccountError(`${email} is not a member of account ${accountId}`);
      try {
        return await removeMember(db, accountId, member.personId, (tx, r) =>
          recordAudit(tx, { actor, action: 'team.remove', accountId, reason, details: { email: r.email, role: r.role }, now: Date.now() }),
        );
      } catch (error) {
        if (error instanceof TeamError) throw new AccountError(error.message);
        throw error;
      }
    });
    io.result({ account_id: accountId, email, role: removed.role, removed: true }, `${email} (${removed.role}) removed from account ${accountId}; their sessions on it ended`);
    return 0;
  },
});

export const accountTwoFactorReset: Command = operatorCommand({
  path: ['account', '2fa', 'reset'],
  summary: 'Turn off the two-factor sign-in of a person who lost their device and recovery codes',
  usage:
    'starport account 2fa reset --email EMAIL --reason TEXT [--actor NAME] [--json]\n\n' +
    'Deletes the TOTP secret and recovery codes and ends every session of the person; they sign in\n' +
    'with their password and enrol again (at once if an account of theirs requires two-factor).\n' +
    'Check who is asking first. Recorded in the audit log of every account the person belongs to.\n' +
    ACTOR_HELP,
  options: { email: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const email = normalizeEmail(required(values, 'email'));
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const result = await withDatabase((db) => operatorResetTwoFactor(db, { email, reason, actor }));
    io.result(
      { email, two_factor_was_on: result.wasOn, accounts: result.accounts },
      result.wasOn ? `two-factor sign-in of ${email} is off; every session of theirs ended` : `${email} had no two-factor sign-in; their sessions ended anyway`,
    );
    return 0;
  },
});
