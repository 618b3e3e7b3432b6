import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { reissueKey } from '../../src/accounts/accounts.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { disableAccount, expectError, expectOk, getBalance, getOrder, pollUntil, postOrder, STARS_50, waitForStatus } from '../support/http.js';

/**
 * PostgreSQL: GET /orders/{id} and GET /balance read the key's verdict and their data in one
 * statement (src/http/api/auth.ts Prefetch), coalesced across the requests of a turn. Shown by
 * holding it back with locks: another transaction locks `accounts` and the data's table, and
 * the statement seen waiting reads both; the answers come once the locks are gone.
 */
describe.skipIf(testEngine !== 'postgres')('reads that take the key with them (PostgreSQL)', () => {
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
    // The order with its events as JSON; the balance found by the key's hash.
    { route: 'GET /orders/{id}', table: 'orders', isDataRead: (query: string) => query.includes('json_agg'), send: (key: string, orderId: string) => getOrder(h, key, orderId) },
    { route: 'GET /balance', table: 'balances', isDataRead: (query: string) => query.includes('"balances"'), send: (key: string) => getBalance(h, key) },
  ])('$route: one statement reads the key and the data', async ({ table, isDataRead, send }) => {
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
          (rows) => rows.some((row) => row.wait_event_type === 'Lock' && row.query.includes('"api_keys"') && row.query.includes('"accounts"') && isDataRead(row.query)),
          { what: `one statement reading the key and the ${table} waiting on the locks` },
        );
      });
    } finally {
      await lock.rollback().execute();
    }
    const res = await answer!;
    expectOk(res);
  });

  test('requests of one turn with different keys each get their own verdict and data', async () => {
    const a = await h.account({ test: '5' });
    const b = await h.account({ test: '7' });
    const revoked = await h.account({ test: '1' });
    const disabled = await h.account({ test: '1' });
    const created = await postOrder(h, a.testKey, STARS_50);
    expectOk(created, 201);
    await waitForStatus(h, a.testKey, created.body.id);
    await reissueKey(h.service.db, revoked.accountId, 'test');
    await disableAccount(h, disabled.accountId);
    const neverIssued = generateApiKey('test');
    const orderId = created.body.id as string;
    // Sent together while a lock holds them back, so that they are read together.
    const lock = await h.service.db.kysely.startTransaction().execute();
    let sent: Promise<Array<Awaited<ReturnType<typeof getOrder>>>>;
    try {
      await sql`lock table accounts in access exclusive mode`.execute(lock);
      sent = Promise.all([
        getOrder(h, a.testKey, orderId),
        getOrder(h, b.testKey, orderId),
        getOrder(h, a.liveKey, orderId),
        getOrder(h, a.testKey, 'ord_notanorder'),
        getOrder(h, revoked.testKey, orderId),
        getOrder(h, disabled.testKey, orderId),
        getOrder(h, neverIssued, orderId),
        getBalance(h, a.testKey),
        getBalance(h, b.testKey),
        getBalance(h, a.liveKey),
        getBalance(h, revoked.testKey),
        getBalance(h, disabled.testKey),
      ]);
      await h.service.db.kysely.connection().execute(async (watcher) => {
        await pollUntil(backends(watcher), (rows) => rows.some((row) => row.wait_event_type === 'Lock'), { what: 'the reads waiting on the lock' });
      });
    } finally {
      await lock.rollback().execute();
    }
    const answers = await sent;
    const [own, otherAccount, otherMode, unknownId, revokedKey, disabledAccount, unknownKey, balanceA, balanceB, balanceLive, balanceRevoked, balanceDisabled] = answers;
    expectOk(own!);
    expect(own!.body).toMatchObject({ id: orderId, status: 'delivered' });
    expect(own!.body.events.length).toBeGreaterThan(0);
    for (const res of [otherAccount, otherMode, unknownId]) expectError(res!, 404, 'order_not_found', 'id');
    expectError(revokedKey!, 401, 'api_key_revoked');
    expectError(disabledAccount!, 401, 'account_disabled');
    expectError(unknownKey!, 401, 'invalid_api_key');
    expectOk(balanceA!);
    expect(balanceA!.body).toEqual((await getBalance(h, a.testKey)).body);
    expect(balanceA!.body.balance.value).not.toBe('5');
    expectOk(balanceB!);
    expect(balanceB!.body.balance).toEqual({ value: '7', reserved: '0', currency: 'TON' });
    expectOk(balanceLive!);
    expect(balanceLive!.body).toMatchObject({ balance: { value: '0', reserved: '0', currency: 'TON' }, mode: 'live' });
    expectError(balanceRevoked!, 401, 'api_key_revoked');
    expectError(balanceDisabled!, 401, 'account_disabled');
  });
});
