import { ApiError } from '../domain/api-error.js';
import { formatTon, NANOTONS_PER_TON } from '../domain/money.js';
import type { Db } from '../db/engine.js';
import { applyMovement, type JournalEntry, readBalance } from './ledger.js';

/**
 * Test funds, the one rule for the API (POST /test_helpers/fund) and the dashboard's "Add test
 * funds": a `deposit` to the *test* balance, through the ledger, whose reason is the request id
 * (shown as the deposit reference in balance history). Stripe's test helpers are the model: an
 * integrator's CI funds its own sandbox.
 */
export const MAX_TEST_FUNDING = 1_000_000n * NANOTONS_PER_TON;
/**
 * The test balance (value + reserved) stays far below the 64-bit column limit (~9.2e9 TON):
 * past it PostgreSQL would refuse the UPDATE and SQLite would silently switch to a float.
 */
export const MAX_TEST_BALANCE = 1_000_000_000n * NANOTONS_PER_TON;

/** Credits `amount` (more than 0, at most MAX_TEST_FUNDING) to the test balance; 400 `invalid_request` otherwise. */
export async function fundTestBalance(db: Db, input: { accountId: string; amount: bigint; reference: string }, now = Date.now()): Promise<JournalEntry> {
  if (input.amount <= 0n || input.amount > MAX_TEST_FUNDING) {
    throw new ApiError('invalid_request', `amount must be more than 0 and at most ${formatTon(MAX_TEST_FUNDING)} TON.`, 'amount');
  }
  const ref = { accountId: input.accountId, mode: 'test' as const };
  return db.kysely.transaction().execute(async (tx) => {
    const before = (await readBalance(tx, ref)) ?? { available: 0n, reserved: 0n };
    if (before.available + before.reserved + input.amount > MAX_TEST_BALANCE) {
      throw new ApiError('invalid_request', `A test balance holds at most ${formatTon(MAX_TEST_BALANCE)} TON; fund less.`, 'amount');
    }
    const entry = await applyMovement(tx, ref, { kind: 'deposit', amount: input.amount, reason: input.reference, now });
    if (!entry) throw new Error(`no test balance for account ${input.accountId}`);
    return entry;
  });
}
