import { isMode } from '../../domain/api-key.js';
import { formatTon, MoneyFormatError, parseTon } from '../../domain/money.js';
import { AdjustmentError, adjustBalance } from '../../ledger/adjust.js';
import { verifyLedger } from '../../ledger/verify.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';

export const balanceCredit: Command = {
  path: ['balance', 'credit'],
  summary: 'Credit (or, with a negative amount, debit) an account balance, with a reason',
  usage: 'starport balance credit --account ACCOUNT_ID --mode live|test --amount TON --reason TEXT [--json]\n\n' +
    'TON is a decimal with at most 9 decimal places; write a negative amount as --amount=-5.',
  options: { account: { type: 'string' }, mode: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' } },
  async run(values, io) {
    const accountId = required(values, 'account');
    const mode = required(values, 'mode');
    if (!isMode(mode)) throw new UsageError(`--mode must be live or test, got "${mode}"`);
    const amountText = required(values, 'amount');
    const reason = required(values, 'reason');
    let amount: bigint;
    try {
      amount = parseTon(amountText, { allowNegative: true });
    } catch (error) {
      if (error instanceof MoneyFormatError) throw new UsageError(`--amount: ${error.message}`);
      throw error;
    }
    const balance = await withDatabase((db) => adjustBalance(db, { accountId, mode, amount, reason })).catch((error) => {
      if (error instanceof AdjustmentError) throw new UsageError(error.message);
      throw error;
    });
    const wire = { value: formatTon(balance.available), reserved: formatTon(balance.reserved), currency: 'TON' };
    io.result({ balance: wire }, `${mode} balance of ${accountId}: ${wire.value} TON available, ${wire.reserved} TON reserved`);
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
