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
import { fragmentSessionSet, liveCheck } from './commands/live.js';
import { walletStatus } from './commands/wallet.js';
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
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(' ').length));
  return [
    'usage: starport <command> [options]',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.summary}`),
    '',
    'Every command accepts --help; operator commands accept --json (one JSON document on stdout).',
  ].join('\n');
}

function findCommand(argv: string[]): { command: Command; rest: string[] } | undefined {
  for (const command of COMMANDS) {
    if (command.path.every((word, i) => argv[i] === word)) return { command, rest: argv.slice(command.path.length) };
  }
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  const found = findCommand(argv);
  if (!found) {
    const help = argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help';
    (help ? process.stdout : process.stderr).write(`${help ? '' : `unknown command: ${argv.join(' ')}\n\n`}${overview()}\n`);
    return help ? 0 : 1;
  }
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
