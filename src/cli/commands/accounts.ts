import { AccountError, createAccount, reissueKey } from '../../accounts/accounts.js';
import { isMode } from '../../domain/api-key.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';

export const accountCreate: Command = {
  path: ['account', 'create'],
  summary: 'Create an account with a live and a test API key (shown once)',
  usage: 'starport account create --email EMAIL [--json]',
  options: { email: { type: 'string' } },
  async run(values, io) {
    const email = required(values, 'email');
    const account = await withDatabase((db) => createAccount(db, email)).catch(rethrowAccountError);
    io.result(
      { account_id: account.accountId, live_key: account.liveKey, test_key: account.testKey },
      `account ${account.accountId}\nlive key: ${account.liveKey}\ntest key: ${account.testKey}\nKeys are shown once; store them now.`,
    );
    return 0;
  },
};

export const keyReissue: Command = {
  path: ['key', 'reissue'],
  summary: 'Issue a new API key for a mode; the previous key stops working at once',
  usage: 'starport key reissue --account ACCOUNT_ID --mode live|test [--json]',
  options: { account: { type: 'string' }, mode: { type: 'string' } },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = required(values, 'mode');
    if (!isMode(mode)) throw new UsageError(`--mode must be live or test, got "${mode}"`);
    const key = await withDatabase((db) => reissueKey(db, accountId, mode)).catch(rethrowAccountError);
    io.result({ key }, `${mode} key: ${key}\nThe previous ${mode} key is revoked. This key is shown once.`);
    return 0;
  },
};

function rethrowAccountError(error: unknown): never {
  if (error instanceof AccountError) throw new UsageError(error.message);
  throw error;
}
