import { ConfigError } from '../env.js';
import { SchemaTooNewError } from '../db/migrate.js';
import { DatabaseUnreachableError } from '../db/reach.js';
import { type Command, type CommandIo, parse, UsageError } from './command.js';
import { accountCreate, accountDisable, accountEnable, accountList, accountShow, keyReissue, keyRevoke } from './commands/accounts.js';
import { accountInvite } from './commands/dashboard.js';
import { accountMemberRemove, accountMembers, accountTwoFactorReset } from './commands/team.js';
import { depositAssign, depositList, depositReturn } from './commands/deposits.js';
import { balanceCredit, balanceDebit, ledgerVerify } from './commands/ledger.js';
import { auditList, backup, dbCopy, restore, stats } from './commands/operations.js';
import { orderList, orderResolve, orderShow } from './commands/orders.js';
import { migrate, serve } from './commands/serve.js';
import { statement, statementAll, statementRevenue } from './commands/statements.js';
import { fragmentSessionSet, liveCheck, livePause, liveResume } from './commands/live.js';
import { walletStatus } from './commands/wallet.js';
import { planAssign, planCreate, planList, planShow } from './commands/plans.js';
import { operatorCreate, operatorLink } from './commands/operators.js';
import { mailList, mailShow, notifyLinkTelegram, notifyStatus, notifyTest } from './commands/notify.js';

const COMMANDS: Command[] = [
  serve,
  migrate,
  accountCreate,
  accountInvite,
  keyReissue,
  balanceCredit,
  ledgerVerify,
  accountList,
  accountShow,
  accountDisable,
  accountEnable,
  keyRevoke,
  balanceDebit,
  orderList,
  orderShow,
  orderResolve,
  stats,
  auditList,
  backup,
  restore,
  dbCopy,
  fragmentSessionSet,
  liveCheck,
  livePause,
  liveResume,
  depositList,
  depositAssign,
  depositReturn,
  walletStatus,
  accountMembers,
  accountMemberRemove,
  accountTwoFactorReset,
  mailList,
  mailShow,
  notifyTest,
  notifyLinkTelegram,
  notifyStatus,
  planCreate,
  planList,
  planShow,
  planAssign,
  statementAll,
  statementRevenue,
  statement,
  operatorCreate,
  operatorLink,
];

/**
 * Groups need no registration: the commands whose path starts with the same words (`account …`)
 * form one, listed by `starport account --help` (and `starport help account`).
 */
function listing(prefix: string[]): string {
  const commands = COMMANDS.filter((c) => c.path.length > prefix.length && prefix.every((word, i) => c.path[i] === word));
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  return [
    `usage: starport ${[...prefix, '<command>'].join(' ')} [options]`,
    '',
    'commands:',
    ...commands.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    'Every command and group accepts --help (`starport account --help`); operator commands accept --json (one JSON\ndocument on stdout).',
  ].join('\n');
}

/** The longest run of leading words that starts some command's path (e.g. ['account']). */
function groupOf(words: string[]): string[] {
  let prefix: string[] = [];
  for (let n = 1; n <= words.length; n++) {
    const candidate = words.slice(0, n);
    if (!COMMANDS.some((c) => c.path.length > n && candidate.every((word, i) => c.path[i] === word))) break;
    prefix = candidate;
  }
  return prefix;
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const command of COMMANDS) {
    if (command.path.every((word, i) => argv[i] === word)) return { command, rest: argv.slice(command.path.length) };
  }
  return undefined;
}

/**
 * No command matched: help for the whole CLI or a group (stdout, 0), or what the words could
 * have been (stderr, 1). Bare `starport` and a bare group (`starport account`) name no command,
 * so they print the listing as an error.
 */
function withoutCommand(argv: string[]): number {
  const helpFlag = argv.includes('--help') || argv.includes('-h');
  const words = argv[0] === 'help' ? argv.slice(1) : argv;
  const named = words.filter((word) => !word.startsWith('-'));
  const group = groupOf(named);
  const complete = group.length === named.length;
  if (complete && (helpFlag || argv[0] === 'help')) {
    process.stdout.write(`${listing(group)}\n`);
    return 0;
  }
  const problem = argv.length === 0 ? '' : complete ? `starport ${group.join(' ')}: name a command\n\n` : `unknown command: ${argv.join(' ')}\n\n`;
  process.stderr.write(`${problem}${listing(group)}\n`);
  return 1;
}

export async function main(argv: string[]): Promise<number> {
  // `starport help account create` is `starport account create --help`.
  const found = findCommand(argv) ?? (argv[0] === 'help' ? findCommand([...argv.slice(1), '--help']) : undefined);
  if (!found) return withoutCommand(argv);
  const { command, rest } = found;
  const json = rest.includes('--json');
  const io: CommandIo = {
    json,
    result: (document, text) => process.stdout.write(`${json ? JSON.stringify(document) : text}\n`),
  };
  try {
    const values = parse(command, rest);
    if (values.help) {
      process.stdout.write(`${command.summary}\n\nusage: ${command.usage}\n`);
      return 0;
    }
    return await command.run(values, io);
  } catch (error) {
    const unreachable = error instanceof DatabaseUnreachableError;
    if (!(error instanceof UsageError || error instanceof ConfigError || error instanceof SchemaTooNewError || unreachable)) throw error;
    process.stderr.write(`error: ${error.message}\n${error instanceof UsageError ? `usage: ${command.usage.split('\n')[0]}\n` : ''}`);
    if (json) process.stdout.write(`${JSON.stringify({ ok: false, error: { message: error.message } })}\n`);
    // 3: the database could not be reached or opened (docs/operations.md "Operator CLI").
    return unreachable ? 3 : 1;
  }
}
