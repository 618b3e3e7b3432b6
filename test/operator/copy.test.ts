import path from 'node:path';
import { SqliteDatabase } from '../../src/db/driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticate } from '../../src/accounts/accounts.js';
import { openDatabase } from '../../src/db/open.js';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { cliFor, makeTempDir, removeDir } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { allowSlowProcesses, createAccount, fails, ok, seedOrder } from './helpers.js';

allowSlowProcesses();
/**
 * `db copy`: the move from the embedded SQLite database to PostgreSQL. It needs a PostgreSQL
 * server, so it runs in the postgres project (TEST_DATABASE_URL set); the source is always a
 * SQLite DATA_DIR. A fresh database is created on the server for the test and dropped after.
 */
const adminUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(testEngine !== 'postgres' || !adminUrl)('db copy from SQLite to PostgreSQL (needs TEST_DATABASE_URL; runs in the postgres project)', () => {
  const name = `starport_copy_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let targetUrl: string;
  let dataDir: string;

  async function admin(query: string) {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  }

  beforeAll(async () => {
    await admin(`create database ${name}`);
    const url = new URL(adminUrl as string);
    url.pathname = `/${name}`;
    targetUrl = url.toString();
    dataDir = makeTempDir('starport-copy-');
  });

  afterAll(async () => {
    removeDir(dataDir);
    await admin(`drop database if exists ${name} with (force)`);
  });

  test('copies every balance, order, event, key and audit entry; the target verifies and the keys work', async () => {
    // DATABASE_URL unset: this CLI works on the SQLite file of dataDir.
    const sqliteCli = cliFor({ DATA_DIR: dataDir, DATABASE_URL: undefined, STARPORT_ACTOR: 'mover' });
    const a = await createAccount(sqliteCli, { live: '10', test: '20' });
    const b = await createAccount(sqliteCli, { test: '1' });
    await ok(sqliteCli, ['account', 'disable', b.account_id, '--reason', 'closed', '--json']);
    await ok(sqliteCli, ['key', 'reissue', '--account', a.account_id, '--mode', 'test', '--json']);
    const source = await openDatabase({ dataDir });
    const orders = [];
    try {
      for (let i = 0; i < 30; i++) orders.push(await seedOrder(source, a.account_id, { hold: i % 3 !== 0, quantity: 50 + i }));
      orders.push(await seedOrder(source, a.account_id, { mode: 'live' }));
    } finally {
      await source.close();
    }
    await ok(sqliteCli, ['order', 'resolve', orders[1]?.id as string, '--delivered', '--reason', 'ok', '--json']);
    await ok(sqliteCli, ['order', 'resolve', orders[2]?.id as string, '--failed', '--reason', 'no', '--json']);
    await ok(sqliteCli, ['balance', 'debit', '--account', a.account_id, '--mode', 'live', '--amount', '1', '--reason', 'withdrawal', '--json']);

    const copied = await ok(sqliteCli, ['db', 'copy', '--to', targetUrl, '--json']);
    expect(copied).toMatchObject({ ok: true, ledger_ok: true, violations: [] });
    const rowsOf = (table: string) => copied.tables.find((t: { name: string }) => t.name === table)?.rows;
    expect(rowsOf('accounts')).toBe(2);
    expect(rowsOf('orders')).toBe(31);
    // Parents before children.
    const order = copied.tables.map((t: { name: string }) => t.name);
    expect(order.indexOf('accounts')).toBeLessThan(order.indexOf('orders'));
    expect(order.indexOf('orders')).toBeLessThan(order.indexOf('order_events'));

    // Row for row the same data, table by table.
    const raw = new SqliteDatabase(path.join(dataDir, SQLITE_FILE_NAME), { readonly: true });
    raw.defaultSafeIntegers(true);
    const target = await openDatabase({ databaseUrl: targetUrl, dataDir });
    try {
      const tables = (raw.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'").all() as { name: string }[]).map(
        (r) => r.name,
      );
      expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'balances', 'journal', 'orders', 'order_events', 'audit_log']));
      const normalise = (rows: Record<string, unknown>[]) =>
        rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)])))).sort();
      for (const table of tables) {
        const expected = normalise(raw.prepare(`select * from "${table}"`).all() as Record<string, unknown>[]);
        const actual = normalise(
          (await target.kysely
            .selectFrom(table as 'accounts')
            .selectAll()
            .execute()) as Record<string, unknown>[],
        );
        expect(actual, `table ${table}`).toEqual(expected);
      }
      // The keys authenticate against PostgreSQL; the disabled account stays disabled.
      expect(await authenticate(target, a.live_key)).toMatchObject({ ok: true, accountId: a.account_id });
      expect(await authenticate(target, a.test_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(target, b.test_key)).toEqual({ ok: false, code: 'account_disabled' });
    } finally {
      raw.close();
      await target.close();
    }

    // The operator's view on the new database is the same.
    const pgCli = cliFor({ DATA_DIR: dataDir, DATABASE_URL: targetUrl });
    expect(await ok(pgCli, ['ledger', 'verify', '--json'])).toEqual({ ok: true });
    const shown = await ok(pgCli, ['account', 'show', a.account_id, '--json']);
    expect(shown.account.balances.live).toEqual({ value: '8.75', reserved: '0.25', currency: 'TON' });
    expect((await ok(pgCli, ['audit', 'list', '--actor', 'mover', '--limit', '1000', '--json'])).entries.length).toBeGreaterThanOrEqual(8);

    // A second copy into the now non-empty database is refused, and changes nothing.
    await fails(sqliteCli, ['db', 'copy', '--to', targetUrl, '--json'], /not empty/);
    expect((await ok(pgCli, ['order', 'list', '--limit', '1000', '--json'])).orders).toHaveLength(31);
  });

  test.each([
    [['db', 'copy', '--json'], /--to/],
    [['db', 'copy', '--to', 'mysql://x/y'], /postgres:\/\//],
  ])('bad input exits 1: %j', async (args, message) => {
    await fails(cliFor({ DATA_DIR: dataDir, DATABASE_URL: undefined }), args, message);
  });

  test('refuses when DATABASE_URL is set (the source is the SQLite DATA_DIR) or DATA_DIR holds no database', async () => {
    await fails(cliFor({ DATA_DIR: dataDir, DATABASE_URL: targetUrl }), ['db', 'copy', '--to', targetUrl, '--json'], /DATABASE_URL unset/);
    const empty = makeTempDir('starport-copy-empty-');
    try {
      await fails(cliFor({ DATA_DIR: empty, DATABASE_URL: undefined }), ['db', 'copy', '--to', targetUrl], /no SQLite database/);
    } finally {
      removeDir(empty);
    }
  });
});
