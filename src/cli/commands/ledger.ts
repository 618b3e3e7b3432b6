import type { Mode } from '../../domain/api-key.js';
import { formatTon, MoneyFormatError, parseTon } from '../../domain/money.js';
import { AdjustmentError } from '../../ledger/adjust.js';
import { type Adjustment, operatorAdjust } from '../../operator/balance-adjust.js';
import type { Balance } from '../../ledger/ledger.js';
import { verifyLedger } from '../../ledger/verify.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, modeOf, reasonOf } from '../operator.js';

function amountOf(values: Record<string, unknown>, allowNegative: boolean): bigint {
  const amountText = required(values, 'amount');
  try {
    return parseTon(amountText, { allowNegative });
  } catch (error) {
    if (error instanceof MoneyFormatError) throw new UsageError(`--amount: ${error.message}`);
    throw error;
  }
}

/** The shared operation (src/operator/balance-adjust.ts); a refusal exits 1 with its message. */
async function adjust(input: Adjustment): Promise<Balance> {
  return withDatabase((db) => operatorAdjust(db, input)).catch((error) => {
    if (error instanceof AdjustmentError) throw new UsageError(error.message);
    throw error;
  });
}

const wire = (balance: Balance) => ({ value: formatTon(balance.available), reserved: formatTon(balance.reserved), currency: 'TON' });

export const balanceCredit: Command = {
  path: ['balance', 'credit'],
  summary: 'Credit (or, with a negative amount, debit) an account balance, with a reason',
  usage:
    'starport balance credit --account ACCOUNT_ID --mode live|test --amount TON --reason TEXT [--actor NAME] [--json]\n\n' +
    'TON is a decimal with at most 9 decimal places; write a negative amount as --amount=-5.\n' +
    ACTOR_HELP,
  options: { account: { type: 'string' }, mode: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = modeOf(values) as Mode;
    const amount = amountOf(values, true);
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const balance = await adjust({ accountId, mode, amount, reason, actor, action: amount < 0n ? 'balance.debit' : 'balance.credit' });
    const shown = wire(balance);
    io.result({ balance: shown }, `${mode} balance of ${accountId}: ${shown.value} TON available, ${shown.reserved} TON reserved`);
    return 0;
  },
};

export const balanceDebit: Command = {
  path: ['balance', 'debit'],
  summary: 'Debit an account balance for a withdrawal or refund paid out by hand, with a reason',
  usage:
    'starport balance debit --account ACCOUNT_ID --mode live|test --amount TON --reason TEXT [--actor NAME] [--json]\n\n' +
    'TON is a positive decimal with at most 9 decimal places. Only the available balance can be debited\n' +
    "(never below zero; reserved amounts belong to open orders). The debit shows in the client's balance\n" +
    'history as an adjustment of -TON with this reason.\n' +
    ACTOR_HELP,
  options: { account: { type: 'string' }, mode: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = modeOf(values) as Mode;
    const amount = amountOf(values, false);
    if (amount === 0n) throw new UsageError('--amount must be greater than 0');
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const balance = await adjust({ accountId, mode, amount: -amount, reason, actor, action: 'balance.debit' });
    const shown = wire(balance);
    io.result(
      { debited: { value: formatTon(amount), currency: 'TON' }, balance: shown },
      `debited ${formatTon(amount)} TON from the ${mode} balance of ${accountId}: ${shown.value} TON available, ${shown.reserved} TON reserved`,
    );
    return 0;
  },
};

export const ledgerVerify: Command = {
  path: ['ledger', 'verify'],
  summary: 'Check the ledger invariants; exit 1 naming each violation',
  usage: 'starport ledger verify [--json]',
  options: {},
  async run(_values, io) {
    const violations = await withDatabase((db) => verifyLedger(db.kysely));
    if (violations.length === 0) {
      io.result({ ok: true }, 'ledger ok: balances match the journal and open orders');
      return 0;
    }
    io.result(
      { ok: false, violations },
      violations.map((v) => `${v.invariant}: account ${v.account_id} (${v.mode})${v.order_id ? ` order ${v.order_id}` : ''}: ${v.message}`).join('\n'),
    );
    return 1;
  },
};
