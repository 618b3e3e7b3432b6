import { AccountError } from '../../accounts/accounts.js';
import { issuePasswordLink } from '../../accounts/dashboard-users.js';
import { loadConfig } from '../../config.js';
import { formatTimestamp } from '../../domain/time.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';

/**
 * Where the dashboard's links point: PUBLIC_URL, the origin the service is reached at. The CLI
 * does not guess it from HOST and PORT: a server started with other values, several nodes, or
 * a reverse proxy would receive the one-time token at an address nothing (or something else)
 * listens on. README.md "Your first test order" and docs/operations.md "Operator CLI".
 */
export function dashboardOrigin(): string | undefined {
  return loadConfig().publicUrl;
}

/** Why a command printed no link: for the operator, in one sentence. */
export const NO_PUBLIC_URL =
  'PUBLIC_URL is not set, so the CLI cannot tell where the dashboard answers; set it to the origin the service is reached at, ' +
  'as for `starport serve` (e.g. PUBLIC_URL=http://127.0.0.1:3000)';

/**
 * `account invite`: a one-time link to set the dashboard password of an existing account. The
 * same link resets a forgotten password. No e-mail is sent: the operator hands the link over.
 */
export const accountInvite: Command = {
  path: ['account', 'invite'],
  summary: 'Print a one-time link that sets (or resets) the dashboard password of an account',
  usage:
    'starport account invite --email EMAIL [--json]\n\n' +
    'The link works once and for 72 hours; a new link replaces any earlier unused one, and using it\n' +
    'logs the account out everywhere. Links start with PUBLIC_URL, which must be set: the origin the service is reached at.',
  options: { email: { type: 'string' } },
  async run(values, io) {
    const email = required(values, 'email');
    const origin = dashboardOrigin();
    // Before the link is issued: a token printed at the wrong address is one handed to a stranger.
    if (origin === undefined) throw new UsageError(`no link printed: ${NO_PUBLIC_URL}`);
    const link = await withDatabase((db) => issuePasswordLink(db, email)).catch((error: unknown) => {
      if (error instanceof AccountError) throw new UsageError(error.message);
      throw error;
    });
    const url = `${origin}/set-password/${link.token}`;
    const expiresAt = formatTimestamp(link.expiresAt);
    io.result(
      { account_id: link.accountId, email: link.email, url, expires_at: expiresAt },
      `Set-password link for ${link.email} (account ${link.accountId}):\n${url}\n` + `It works once, until ${expiresAt}. Hand it to the account holder; no e-mail is sent.`,
    );
    return 0;
  },
};
