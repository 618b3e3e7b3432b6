import { type Kysely, sql } from 'kysely';
import { OPEN_STATUSES } from '../domain/order-status.js';
import type { Database } from '../db/schema.js';

/**
 * `ledger verify`: the invariants of docs/architecture.md "ledger verify", each checked from the database alone.
 * Sums are read through `toBigInt` because engines return aggregates as bigint or string.
 */
export interface Violation {
  invariant:
    | 'journal_matches_available'
    | 'journal_matches_reserved'
    | 'balance_not_negative'
    | 'reserved_matches_open_orders'
    | 'order_journal_matches_status'
    | 'journal_balance_after_matches'
    | 'balance_days_match_journal';
  account_id: string;
  mode: string;
  order_id?: string;
  expected: string;
  actual: string;
  message: string;
}

const toBigInt = (value: unknown): bigint => (value === null || value === undefined ? 0n : BigInt(String(value)));
const key = (accountId: string, mode: string) => `${accountId}\u0000${mode}`;

export async function verifyLedger(db: Kysely<Database>): Promise<Violation[]> {
  // One read transaction: the reads see the same snapshot while the service keeps writing
  // (SQLite: BEGIN IMMEDIATE holds writers off; PostgreSQL: REPEATABLE READ).
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const violations: Violation[] = [];
      const balances = await tx.selectFrom('balances').selectAll().execute();
      const journal = await tx
        .selectFrom('journal')
        .select(['account_id', 'mode', sql`sum(available_delta)`.as('available'), sql`sum(reserved_delta)`.as('reserved')])
        .groupBy(['account_id', 'mode'])
        .execute();
      const open = await tx
        .selectFrom('orders')
        .select(['account_id', 'mode', sql`sum(amount)`.as('amount')])
        .where('status', 'in', OPEN_STATUSES as never)
        .groupBy(['account_id', 'mode'])
        .execute();
      const journalSums = new Map(journal.map((r) => [key(r.account_id, r.mode), r]));
      const openSums = new Map(open.map((r) => [key(r.account_id, r.mode), toBigInt(r.amount)]));
      const balanceKeys = new Set(balances.map((b) => key(b.account_id, b.mode)));

      for (const b of balances) {
        const at = { account_id: b.account_id, mode: b.mode };
        const available = toBigInt(b.available);
        const reserved = toBigInt(b.reserved);
        const sums = journalSums.get(key(b.account_id, b.mode));
        const check = (invariant: Violation['invariant'], expected: bigint, actual: bigint, what: string) => {
          if (expected !== actual) {
            violations.push({ invariant, ...at, expected: String(expected), actual: String(actual), message: `${what}: expected ${expected}, found ${actual} (nanotons)` });
          }
        };
        check('journal_matches_available', toBigInt(sums?.available), available, 'available balance differs from the journal');
        check('journal_matches_reserved', toBigInt(sums?.reserved), reserved, 'reserved balance differs from the journal');
        check('reserved_matches_open_orders', openSums.get(key(b.account_id, b.mode)) ?? 0n, reserved, 'reserved balance differs from the sum of open orders');
        if (available < 0n || reserved < 0n) {
          violations.push({ invariant: 'balance_not_negative', ...at, expected: '>= 0', actual: `${available} available, ${reserved} reserved`, message: 'balance is negative' });
        }
      }
      for (const [k, sums] of journalSums) {
        if (!balanceKeys.has(k)) {
          violations.push({
            invariant: 'journal_matches_available',
            account_id: sums.account_id,
            mode: sums.mode,
            expected: 'a balance row',
            actual: 'none',
            message: 'journal rows for a balance that does not exist',
          });
        }
      }
      violations.push(...(await verifyOrders(tx)));
      violations.push(...(await verifyBalanceAfter(tx)));
      violations.push(...(await verifyBalanceDays(tx)));
      return violations;
    });
}

/**
 * balance_days (balance-days.ts): each account's, mode's and day's net change of the available
 * balance equals the sum of that day's journal rows. Days whose changes sum to zero may have a
 * row of zero or none.
 */
async function verifyBalanceDays(tx: Kysely<Database>): Promise<Violation[]> {
  const dayOf = sql<bigint>`created_at / ${sql.lit(86_400_000)}`;
  const journal = await tx
    .selectFrom('journal')
    .select(['account_id', 'mode', dayOf.as('day'), sql`sum(available_delta)`.as('net')])
    .groupBy(['account_id', 'mode', dayOf])
    .execute();
  const rolled = await tx.selectFrom('balance_days').select(['account_id', 'mode', 'day', 'available_net']).execute();
  const dayKey = (r: { account_id: string; mode: string; day: unknown }) => `${key(r.account_id, r.mode)}\u0000${String(r.day)}`;
  const expected = new Map(journal.map((r) => [dayKey(r), { at: r, net: toBigInt(r.net) }]));
  const actual = new Map(rolled.map((r) => [dayKey(r), { at: r, net: toBigInt(r.available_net) }]));
  const violations: Violation[] = [];
  for (const k of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(k)?.net ?? 0n;
    const got = actual.get(k)?.net ?? 0n;
    if (want === got) continue;
    const at = (expected.get(k) ?? actual.get(k))!.at;
    violations.push({
      invariant: 'balance_days_match_journal',
      account_id: at.account_id,
      mode: at.mode,
      expected: String(want),
      actual: String(got),
      message: `day ${String(at.day)}: balance_days has a net of ${got}, the journal ${want} (nanotons)`,
    });
  }
  return violations;
}

/** Each order's journal rows must match its status: reserved while open, debited or released after. */
async function verifyOrders(tx: Kysely<Database>): Promise<Violation[]> {
  const rows = await tx
    .selectFrom('orders as o')
    .leftJoin('journal as j', 'j.order_no', 'o.order_no')
    .select(['o.id', 'o.account_id', 'o.mode', 'o.status', 'o.amount', sql`sum(j.available_delta)`.as('available'), sql`sum(j.reserved_delta)`.as('reserved')])
    .groupBy(['o.id', 'o.account_id', 'o.mode', 'o.status', 'o.amount'])
    .execute();
  const violations: Violation[] = [];
  for (const row of rows) {
    const amount = toBigInt(row.amount);
    const isOpen = (OPEN_STATUSES as readonly string[]).includes(row.status);
    const expected = {
      available: row.status === 'failed' ? 0n : -amount,
      reserved: isOpen ? amount : 0n,
    };
    const actual = { available: toBigInt(row.available), reserved: toBigInt(row.reserved) };
    if (expected.available !== actual.available || expected.reserved !== actual.reserved) {
      violations.push({
        invariant: 'order_journal_matches_status',
        account_id: row.account_id,
        mode: row.mode,
        order_id: row.id,
        expected: `available ${expected.available}, reserved ${expected.reserved}`,
        actual: `available ${actual.available}, reserved ${actual.reserved}`,
        message: `journal of ${row.status} order ${row.id} does not match its amount ${amount}`,
      });
    }
  }
  return violations;
}

/**
 * Balance history's `balance_after`: the last journal row of each balance (seq = journal_seq)
 * records exactly the balance, and the sequence has no gaps (journal_seq rows numbered 1…n).
 */
async function verifyBalanceAfter(tx: Kysely<Database>): Promise<Violation[]> {
  const rows = await tx
    .selectFrom('balances as b')
    .leftJoin('journal as last', (join) => join.onRef('last.account_id', '=', 'b.account_id').onRef('last.mode', '=', 'b.mode').onRef('last.seq', '=', 'b.journal_seq'))
    .select([
      'b.account_id',
      'b.mode',
      'b.available',
      'b.reserved',
      'b.journal_seq',
      'last.balance_available',
      'last.balance_reserved',
      (eb) => eb.selectFrom('journal as j').select(sql`count(*)`.as('n')).whereRef('j.account_id', '=', 'b.account_id').whereRef('j.mode', '=', 'b.mode').as('rows'),
    ])
    .execute();
  const violations: Violation[] = [];
  for (const row of rows) {
    const seq = toBigInt(row.journal_seq);
    const count = toBigInt(row.rows);
    const at = { invariant: 'journal_balance_after_matches' as const, account_id: row.account_id, mode: row.mode };
    if (seq !== count) {
      violations.push({ ...at, expected: `${count} journal rows numbered 1…${count}`, actual: `journal_seq ${seq}`, message: 'the journal sequence does not match its row count' });
      continue;
    }
    if (seq === 0n) continue;
    const expected = `available ${toBigInt(row.available)}, reserved ${toBigInt(row.reserved)}`;
    const actual = `available ${toBigInt(row.balance_available)}, reserved ${toBigInt(row.balance_reserved)}`;
    if (expected !== actual) {
      violations.push({ ...at, expected, actual, message: 'the balance after the last journal row differs from the balance' });
    }
  }
  return violations;
}
