import { loadConfig } from '../../config.js';
import { formatUsdt } from '../../domain/usdt.js';
import { usdtRateFrom } from '../../deposits/usdt-rate.js';
import { configuredRateFeed } from '../../live/pricing/rate-feed.js';
import { FixedRateFeed } from '../../providers/pricing/list-price-source.js';
import { AssignError, assignDeposit, ReturnError, returnDeposit } from '../../deposits/settle.js';
import { type Deposit, listDeposits } from '../../deposits/store.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, limitOf, operatorCommand, optionalReasonOf, refuse, table, time, ton } from '../operator.js';

/**
 * Live top-ups for the operator: the deposits the watcher recorded, and what becomes
 * of an unmatched one (no or mistyped memo, below the minimum): the credit to the account it
 * belongs to (`assign`), or the record that its TON was sent back by hand (`return`).
 */
function depositJson(d: Deposit) {
  return {
    id: d.id,
    tx_hash: d.txHash,
    lt: String(d.lt),
    status: d.status,
    reason: d.reason,
    account_id: d.accountId,
    asset: d.asset,
    amount: { value: ton(d.amount), currency: 'TON' },
    jetton_amount: d.jettonAmount === null ? null : d.asset === 'USDT' ? formatUsdt(d.jettonAmount) : String(d.jettonAmount),
    jetton_wallet: d.jettonWallet,
    rate: d.rate,
    rate_at: time(d.rateAt),
    sender: d.sender,
    comment: d.comment,
    chain_time: time(d.chainTime),
    seen_at: time(d.createdAt),
    credited_at: time(d.creditedAt),
    credited_by: d.creditedBy,
    returned_at: time(d.returnedAt),
  };
}

/** Comments are untrusted chain data: one line, printable, short, in the text table. */
const shown = (comment: string | null) => (comment === null ? null : JSON.stringify(comment.length > 40 ? `${comment.slice(0, 39)}…` : comment));

export const depositList: Command = operatorCommand({
  path: ['deposit', 'list'],
  summary: 'List TON and USDT deposits to the deposit wallet, newest first (--unmatched: those waiting for the operator)',
  usage:
    'starport deposit list [--unmatched] [--account ACCOUNT_ID] [--limit N (50)] [--json]\n\n' +
    'Statuses: credited, unmatched (waiting for the operator), returned (sent back by hand, recorded with deposit return),\n' +
    'awaiting_rate (USDT matched to an account, credited when a fresh TON/USD rate exists), ignored (a jetton\n' +
    "notification from a contract that is not the deposit wallet's USDT wallet: a fake or another token, reason unknown_jetton).\n" +
    'Unmatched reasons: no_comment, memo_invalid (wrong shape or check character: a typo), memo_unknown, below_minimum.\n' +
    'Credit one to its account with: starport deposit assign --tx HASH --account ACCOUNT_ID\n' +
    'or, once you sent the TON back yourself, record it with: starport deposit return --tx HASH',
  options: { unmatched: { type: 'boolean' }, account: { type: 'string' }, limit: { type: 'string' } },
  async run(values, io) {
    if (values.account !== undefined && (typeof values.account !== 'string' || values.account === '')) throw new UsageError('--account needs a value');
    const filter = {
      accountId: values.account as string | undefined,
      status: values.unmatched ? ('unmatched' as const) : undefined,
      limit: limitOf(values, 50),
    };
    const deposits = await withDatabase((db) => listDeposits(db.kysely, filter));
    io.result(
      { deposits: deposits.map(depositJson) },
      deposits.length === 0
        ? values.unmatched
          ? 'no unmatched deposits'
          : 'no deposits'
        : table(
            ['TX HASH', 'STATUS', 'ACCOUNT', 'AMOUNT TON', 'USDT', 'COMMENT', 'CHAIN TIME'],
            deposits.map((d) => [
              d.txHash,
              d.status + (d.reason ? ` (${d.reason})` : ''),
              d.accountId,
              ton(d.amount),
              d.asset === 'USDT' ? `${formatUsdt(d.jettonAmount ?? 0n)}${d.rate ? ` @ ${d.rate}` : ''}` : d.asset === 'jetton' ? 'foreign jetton' : null,
              shown(d.comment),
              time(d.chainTime),
            ]),
          ),
    );
    return 0;
  },
});

export const depositAssign: Command = operatorCommand({
  path: ['deposit', 'assign'],
  summary: 'Credit an unmatched deposit to an account (once; audited)',
  usage:
    'starport deposit assign --tx HASH --account ACCOUNT_ID [--reason TEXT] [--actor NAME] [--json]\n\n' +
    'HASH: the transaction hash from `deposit list` (hex, or base64 as explorers show it). The amount is credited\n' +
    "to the live balance; a deposit already credited is refused. A USDT deposit is converted at the rate feed's\n" +
    'current TON/USD rate less USDT_DEPOSIT_SPREAD_PERCENT, as the watcher would; without a fresh rate it is refused.\n' +
    ACTOR_HELP,
  options: { tx: { type: 'string' }, account: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const txHash = required(values, 'tx');
    const accountId = required(values, 'account');
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    try {
      const usdt = await currentUsdtConversion();
      const deposit = await withDatabase((db) => assignDeposit(db, { txHash, accountId, actor, reason, usdt }));
      io.result({ deposit: depositJson(deposit) }, `credited ${ton(deposit.amount)} TON (deposit ${deposit.txHash}) to the live balance of ${accountId}`);
      return 0;
    } catch (error) {
      if (error instanceof AssignError) return refuse(io, error.message);
      throw error;
    }
  },
});

/** The rate feed's TON/USD rate now (undefined when it has none) and the configured spread. */
async function currentUsdtConversion() {
  const config = loadConfig();
  const feed = configuredRateFeed(config.live.pricing, new FixedRateFeed(config.tonUsdRate));
  return { rate: await usdtRateFrom(feed)(), spreadPercent: config.usdt.spreadPercent };
}

export const depositReturn: Command = operatorCommand({
  path: ['deposit', 'return'],
  summary: 'Record that an unmatched deposit was sent back by hand (sends nothing; once; audited)',
  usage:
    'starport deposit return --tx HASH [--reason TEXT] [--actor NAME] [--json]\n\n' +
    'HASH: the transaction hash from `deposit list` (hex, or base64 as explorers show it). This sends nothing on\n' +
    'chain: first send the TON back to the sender yourself, from the deposit wallet (e.g. with a comment naming the\n' +
    'hash; for USDT a jetton transfer of the same USDT amount from the deposit wallet), then record it here. The deposit leaves the unmatched ones (status returned) and no balance changes.\n' +
    'A deposit already credited or already returned is refused.\n' +
    ACTOR_HELP,
  options: { tx: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const txHash = required(values, 'tx');
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    try {
      const deposit = await withDatabase((db) => returnDeposit(db, { txHash, actor, reason }));
      io.result(
        { deposit: depositJson(deposit) },
        `recorded deposit ${deposit.txHash} (${deposit.asset === 'USDT' ? `${formatUsdt(deposit.jettonAmount ?? 0n)} USDT` : `${ton(deposit.amount)} TON`} from ${deposit.sender}) as returned to its sender; nothing was sent by Starport`,
      );
      return 0;
    } catch (error) {
      if (error instanceof ReturnError) return refuse(io, error.message);
      throw error;
    }
  },
});
