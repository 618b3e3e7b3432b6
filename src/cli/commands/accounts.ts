import { AccountError, createAccount } from '../../accounts/accounts.js';
import { issuePasswordLink } from '../../accounts/dashboard-users.js';
import { formatTimestamp } from '../../domain/time.js';
import { dashboardOrigin, NO_PUBLIC_URL } from './dashboard.js';
import { type AccountStatus, type AccountSummary, findAccount, listAccounts, listKeys, orderCounts, recentJournal } from '../../accounts/admin.js';
import { listAudit, recordAudit } from '../../audit/audit.js';
import { operatorReissueKey, operatorRevokeKey } from '../../operator/api-keys.js';
import { operatorSetStatus } from '../../operator/account-status.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import {
  ACTOR_HELP,
  actorOf,
  auditJson,
  auditTable,
  actorOption,
  limitOf,
  modeOf,
  operatorCommand,
  optionalReasonOf,
  positional,
  reasonOf,
  table,
  time,
  ton,
} from '../operator.js';

export const accountCreate: Command = {
  path: ['account', 'create'],
  summary: 'Create an account with a live and a test API key (shown once) and a dashboard set-password link',
  usage:
    `starport account create --email EMAIL [--reason TEXT] [--actor NAME] [--json]\n\n` +
    'Also prints a one-time link (72 hours, like `account invite`) with which the account holder sets\n' +
    'a dashboard password and logs in. The link starts with PUBLIC_URL, the origin the service is reached at; without it\n' +
    'the account is created with no link (`account invite` prints one later).\n\n' +
    ACTOR_HELP,
  options: { email: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const email = required(values, 'email');
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    const now = Date.now();
    const origin = dashboardOrigin();
    // The link follows the account's own commit: should it fail, `account invite` issues one.
    const { account, link } = await withDatabase(async (db) => {
      const account = await createAccount(db, email, now, (tx, created) =>
        recordAudit(tx, { actor, action: 'account.create', accountId: created.accountId, reason, details: { email: email.trim().toLowerCase() }, now }),
      );
      return { account, link: origin === undefined ? undefined : await issuePasswordLink(db, email, now) };
    }).catch(rethrowAccountError);
    const url = link && `${origin}/set-password/${link.token}`;
    const expiresAt = link && formatTimestamp(link.expiresAt);
    const keys = `account ${account.accountId}\nlive key: ${account.liveKey}\ntest key: ${account.testKey}\nKeys are shown once; store them now.\n`;
    const noLink = `no dashboard link printed: ${NO_PUBLIC_URL}; then \`starport account invite --email ${email}\` prints one.`;
    if (!url && io.json) process.stderr.write(`warning: ${noLink}\n`);
    io.result(
      { account_id: account.accountId, live_key: account.liveKey, test_key: account.testKey, set_password_url: url ?? null, set_password_expires_at: expiresAt ?? null },
      url ? `${keys}Dashboard: open this one-time link to set a password and log in (works once, until ${expiresAt}):\n${url}` : `${keys}Dashboard: ${noLink}`,
    );
    return 0;
  },
};

export const keyReissue: Command = {
  path: ['key', 'reissue'],
  summary: 'Issue a new API key for a mode; the previous key stops working at once',
  usage: `starport key reissue --account ACCOUNT_ID --mode live|test [--reason TEXT] [--actor NAME] [--json]\n\n${ACTOR_HELP}`,
  options: { account: { type: 'string' }, mode: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = modeOf(values) as 'live' | 'test';
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    const now = Date.now();
    const key = await withDatabase((db) => operatorReissueKey(db, { accountId, mode, reason, actor }, now)).catch(rethrowAccountError);
    io.result({ key }, `${mode} key: ${key}\nThe previous ${mode} key is revoked. This key is shown once.`);
    return 0;
  },
};

export const keyRevoke: Command = operatorCommand({
  path: ['key', 'revoke'],
  summary: 'Revoke the active API key of a mode without issuing a new one',
  usage:
    'starport key revoke --account ACCOUNT_ID --mode live|test --reason TEXT [--actor NAME] [--json]\n\n' +
    'The key answers 401 api_key_revoked from the very next request. `key reissue` gives the account a key again.\n' +
    ACTOR_HELP,
  options: { account: { type: 'string' }, mode: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = modeOf(values) as 'live' | 'test';
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const now = Date.now();
    const result = await withDatabase((db) => operatorRevokeKey(db, { accountId, mode, reason, actor }, now));
    const changed = result.revokedPrefix !== null;
    io.result(
      { account_id: accountId, mode, revoked_key_prefix: result.revokedPrefix, changed },
      changed
        ? `revoked the ${mode} key ${result.revokedPrefix}… of ${accountId}; the account has no ${mode} key until \`starport key reissue\``
        : `${accountId} has no active ${mode} key; nothing changed`,
    );
    return 0;
  },
});

function accountJson(a: AccountSummary) {
  const balance = (b: { available: bigint; reserved: bigint }) => ({ value: ton(b.available), reserved: ton(b.reserved), currency: 'TON' });
  return {
    id: a.id,
    email: a.email,
    status: a.status,
    created_at: time(a.createdAt),
    balances: { live: balance(a.balances.live), test: balance(a.balances.test) },
  };
}

const STATUSES: AccountStatus[] = ['active', 'disabled'];

export const accountList: Command = operatorCommand({
  path: ['account', 'list'],
  summary: 'List accounts, newest first, with their balances',
  usage: 'starport account list [--status active|disabled] [--limit N (100)] [--json]',
  options: { status: { type: 'string' }, limit: { type: 'string' } },
  async run(values, io) {
    const status = values.status;
    if (status !== undefined && !STATUSES.includes(status as AccountStatus)) {
      throw new UsageError(`--status must be active or disabled, got "${String(status)}"`);
    }
    const limit = limitOf(values, 100);
    const accounts = await withDatabase((db) => listAccounts(db.kysely, { status: status as AccountStatus | undefined, limit }));
    const rows = accounts.map((a) => [a.id, a.email, a.status, time(a.createdAt), ton(a.balances.live.available), ton(a.balances.live.reserved), ton(a.balances.test.available)]);
    io.result(
      { accounts: accounts.map(accountJson) },
      accounts.length === 0 ? 'no accounts' : table(['ACCOUNT', 'EMAIL', 'STATUS', 'CREATED', 'LIVE TON', 'LIVE RESERVED', 'TEST TON'], rows),
    );
    return 0;
  },
});

export const accountShow: Command = operatorCommand({
  path: ['account', 'show'],
  summary: 'Show an account: status, keys, balances, orders, balance history and audit log',
  usage: 'starport account show ACCOUNT_ID|EMAIL [--json]',
  options: {},
  positionals: ['account'],
  async run(values, io) {
    const idOrEmail = positional(values, 'account', 'ACCOUNT_ID (or the account e-mail)');
    const found = await withDatabase(async (db) => {
      const account = await findAccount(db.kysely, idOrEmail);
      if (!account) return undefined;
      return {
        account,
        keys: await listKeys(db.kysely, account.id),
        orders: await orderCounts(db.kysely, account.id),
        history: await recentJournal(db.kysely, account.id, 20),
        audit: await listAudit(db.kysely, { accountId: account.id, limit: 20 }),
      };
    });
    if (!found) throw new AccountError(`no account ${idOrEmail}`);
    const { account, keys, orders, history, audit } = found;
    const document = {
      account: accountJson(account),
      keys: keys.map((k) => ({ id: k.id, mode: k.mode, prefix: k.prefix, created_at: time(k.createdAt), revoked_at: time(k.revokedAt), active: k.revokedAt === null })),
      orders,
      history: history.map((h) => ({
        id: h.id,
        mode: h.mode,
        kind: h.kind,
        order_id: h.orderId,
        available_delta: ton(h.availableDelta),
        reserved_delta: ton(h.reservedDelta),
        reason: h.reason,
        created_at: time(h.createdAt),
      })),
      audit: audit.map(auditJson),
    };
    const a = document.account;
    const text = [
      `account ${a.id}  ${a.email}  ${a.status}  created ${a.created_at}`,
      `live balance: ${a.balances.live.value} TON available, ${a.balances.live.reserved} TON reserved`,
      `test balance: ${a.balances.test.value} TON available, ${a.balances.test.reserved} TON reserved`,
      '',
      'keys:',
      table(
        ['MODE', 'PREFIX', 'CREATED', 'REVOKED'],
        document.keys.map((k) => [k.mode, `${k.prefix}…`, k.created_at, k.revoked_at]),
      ),
      '',
      `orders: live ${formatCounts(orders.live)}; test ${formatCounts(orders.test)}`,
      '',
      'balance history (newest first, last 20):',
      history.length === 0
        ? '  none'
        : table(
            ['TIME', 'MODE', 'KIND', 'AVAILABLE', 'RESERVED', 'ORDER / REASON'],
            document.history.map((h) => [h.created_at, h.mode, h.kind, h.available_delta, h.reserved_delta, h.order_id ?? h.reason]),
          ),
      '',
      'audit log (newest first, last 20):',
      audit.length === 0 ? '  none' : auditTable(audit.map(auditJson)),
    ].join('\n');
    io.result(document, text);
    return 0;
  },
});

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([status, n]) => `${n} ${status}`).join(', ');
}

function statusCommand(status: AccountStatus): Command {
  const verb = status === 'disabled' ? 'disable' : 'enable';
  return operatorCommand({
    path: ['account', verb],
    summary:
      status === 'disabled'
        ? 'Disable an account: its keys answer 401 account_disabled and its dashboard login is refused; nothing is deleted'
        : 'Enable a disabled account again: its active keys and dashboard login work again',
    usage:
      `starport account ${verb} ACCOUNT_ID --reason TEXT [--actor NAME] [--json]\n\n` +
      (status === 'disabled' ? 'Applies from the very next request. Orders already created are still fulfilled (their amount is reserved).\n' : '') +
      ACTOR_HELP,
    options: { reason: { type: 'string' }, ...actorOption },
    positionals: ['account'],
    async run(values, io) {
      const accountId = positional(values, 'account', 'ACCOUNT_ID');
      const reason = reasonOf(values);
      const actor = actorOf(values);
      const result = await withDatabase((db) => operatorSetStatus(db, { accountId, status, reason, actor }));
      io.result(
        { account_id: accountId, status: result.status, changed: result.changed },
        result.changed ? `account ${accountId} is now ${result.status}` : `account ${accountId} was already ${result.status}; nothing changed`,
      );
      return 0;
    },
  });
}

export const accountDisable = statusCommand('disabled');
export const accountEnable = statusCommand('active');

function rethrowAccountError(error: unknown): never {
  if (error instanceof AccountError) throw new UsageError(error.message);
  throw error;
}
