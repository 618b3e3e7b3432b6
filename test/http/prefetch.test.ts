import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { expectOk, getBalance, getOrder, pollUntil, postOrder, STARS_50, waitForStatus } from '../support/http.js';

/**
 * PostgreSQL: GET /orders/{id} and GET /balance read their data beside the key's lookup
 * (src/http/api/auth.ts Prefetch), not after it. Shown by holding both back with locks: the
 * key's lookup joins `accounts`, the data read its own table, and another transaction locks
 * both. Both statements are then seen waiting at once (read one after the other, only the
 * key's would be); the answer comes once the locks are gone.
 */
describe.skipIf(testEngine !== 'postgres')('reads started beside the key (PostgreSQL)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  /**
   * What each other backend of the database is doing, and the last statement it ran: asked on
   * a connection of its own (`watcher`), so that the question never replaces the last
   * statement of a connection the service used.
   */
  const backends = (watcher: Kysely<Database>) => () =>
    sql<{ state: string; wait_event_type: string | null; query: string }>`
      select state, wait_event_type, query from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()`
      .execute(watcher)
      .then((result) => result.rows);

  test.each([
    // The order with its events as JSON; the balance joined to the key by its hash.
    // The order with its events as JSON; the balance found by the key's hash.
    { route: 'GET /orders/{id}', table: 'orders', isDataRead: (query: string) => query.includes('json_agg'), send: (key: string, orderId: string) => getOrder(h, key, orderId) },
    { route: 'GET /balance', table: 'balances', isDataRead: (query: string) => query.includes('"balances"') && query.includes('"key_hash"'), send: (key: string) => getBalance(h, key) },
  ])('$route: the data read and the key lookup wait at the same time', async ({ table, isDataRead, send }) => {
    const a = await h.account({ test: '1' });
    const created = await postOrder(h, a.testKey, STARS_50);
    expectOk(created, 201);
    // Final first: the worker's own writes would wait on the lock too, holding connections.
    await waitForStatus(h, a.testKey, created.body.id);
    const lock = await h.service.db.kysely.startTransaction().execute();
    let answer: ReturnType<typeof send> | undefined;
    try {
      await sql`lock table accounts, ${sql.table(table)} in access exclusive mode`.execute(lock);
      await h.service.db.kysely.connection().execute(async (watcher) => {
        answer = send(a.testKey, created.body.id);
        await pollUntil(
          backends(watcher),
          (rows) => {
            const waiting = rows.filter((row) => row.wait_event_type === 'Lock').map((row) => row.query);
            const keyLookup = waiting.some((query) => query.includes('"accounts"'));
            const dataRead = waiting.some((query) => isDataRead(query) && !query.includes('"accounts"'));
            return keyLookup && dataRead;
          },
          { what: `the key lookup and the ${table} read both waiting on the locks` },
        );
      });
    } finally {
      await lock.rollback().execute();
    }
    const res = await answer!;
    expectOk(res);
  });
});
