import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { MS_PER_DAY } from '../domain/time.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';

/**
 * `balance_days` (migration 0018): per account, mode and UTC day, the net change of the
 * available balance of the movements dated that day. Every movement that changes the available
 * balance adds its change to its day's row in the movement's own statement (PostgreSQL) or
 * transaction (SQLite), so the row is exact; a debit changes only the reserved balance and
 * writes nothing here. The balance at the end of a day is the current available balance less
 * the nets of the days after it: the dashboard's balance chart reads one balance row and at
 * most 30 of these (docs/architecture.md "Daily rollups").
 */

/** SQLite: the movement's change added to its day's row (PostgreSQL does it in the movement's statement). */
export const addToBalanceDay = preparedQuery((db, accountId: string, mode: Mode, day: number, net: bigint) =>
  db
    .insertInto('balance_days')
    .values({ account_id: accountId, mode, day, available_net: net })
    .onConflict((oc) => oc.columns(['account_id', 'mode', 'day']).doUpdateSet({ available_net: sql`${sql.ref('balance_days.available_net')} + excluded.available_net` })),
);

/**
 * PostgreSQL: the same, as the body of a common table expression of the movement's statement
 * that reads the balance row's update (`moved`): no row moved, nothing added. A net of zero adds
 * no row. Each argument goes into the SQL as a value, as preparedQuery needs (src/db/prepared.ts).
 */
export function addToBalanceDayFromMoved(input: { accountId: string; mode: Mode; now: number; net: RawBuilder<bigint> }): RawBuilder<unknown> {
  return sql`insert into balance_days (account_id, mode, day, available_net)
        select cast(${input.accountId} as text), cast(${input.mode} as text), cast(${input.now} as bigint) / ${sql.lit(MS_PER_DAY)}, ${input.net}
          from moved
         where ${input.net} <> 0
        on conflict (account_id, mode, day) do update set available_net = balance_days.available_net + excluded.available_net`;
}

const selectBalanceAndDays = preparedQuery((db, accountId: string, mode: Mode, afterDay: bigint) =>
  db
    .selectFrom('balances')
    .select([sql<bigint | null>`cast(null as bigint)`.as('day'), 'available as amount'])
    .where('account_id', '=', accountId)
    .where('mode', '=', mode)
    .unionAll(db.selectFrom('balance_days').select(['day', 'available_net as amount']).where('account_id', '=', accountId).where('mode', '=', mode).where('day', '>', afterDay)),
);

/**
 * The available balance at the end of each of `count` UTC days from `firstDay` on, oldest first:
 * one statement (one snapshot) reading the balance row and the day rows after `firstDay`.
 */
export async function availableAtDayEnds(db: Kysely<Database>, ref: { accountId: string; mode: Mode }, firstDay: number, count: number): Promise<bigint[]> {
  const rows = await selectBalanceAndDays(db, ref.accountId, ref.mode, BigInt(firstDay));
  let now = 0n;
  const nets = new Map<number, bigint>();
  for (const row of rows) {
    if (row.day === null) now = BigInt(row.amount);
    else nets.set(Number(row.day), BigInt(row.amount));
  }
  // Days after the window (a movement dated later than the chart's now) come off first.
  let after = 0n;
  for (const [day, net] of nets) if (day >= firstDay + count) after += net;
  const ends = new Array<bigint>(count);
  let balance = now - after;
  for (let i = count - 1; i >= 0; i--) {
    ends[i] = balance;
    balance -= nets.get(firstDay + i) ?? 0n;
  }
  return ends;
}
