import fs from 'node:fs';
import path from 'node:path';
import { SqliteDatabase } from '../../src/db/driver.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { cliFor, makeTempDir, parseJsonStdout, removeDir } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { allowSlowProcesses, type Cli, createAccount, expectExit, fails, ok, operatorCli } from './helpers.js';

allowSlowProcesses();
/**
 * `backup` and `restore` of the embedded SQLite database. A backup is SQLite's backup API over
 * the live file, so it can only be tested on SQLite: on PostgreSQL the commands point to
 * pg_dump / pg_restore, which is what the postgres block checks.
 */
const sqliteOnly = describe.skipIf(testEngine !== 'sqlite');

sqliteOnly('backup while the service runs (SQLite only: PostgreSQL is backed up with pg_dump)', () => {
  let fresh: FreshDatabase;
  let cli: Cli;
  let serve: ServeProcess | undefined;
  let work: string;

  beforeAll(async () => {
    fresh = await freshDatabase();
    cli = operatorCli(fresh);
    work = makeTempDir('starport-backup-');
    await ok(cli, ['migrate', '--json']);
  });

  afterAll(async () => {
    await serve?.stop();
    removeDir(work);
    await fresh?.dispose();
  });

  test('a backup taken while 200 orders are being created restores to a database that verifies and holds every order acknowledged before it', async () => {
    const account = await createAccount(cli, { test: '1000' });
    serve = await startServe({ ...fresh.env, TEST_FULFILMENT_DELAY_MS: '50', RATE_LIMIT_RPS: '0' });
    const url = serve.url;

    const acknowledged: { id: string; at: number }[] = [];
    let backupStartedAt = Number.POSITIVE_INFINITY;
    let backupEndedAt = Number.POSITIVE_INFINITY;
    let backupResult: Awaited<ReturnType<Cli>> | undefined;
    const backupFile = path.join(work, 'during-load.sqlite');

    const create = async (i: number) => {
      const response = await fetch(`${url}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.test_key}`, 'content-type': 'application/json', 'idempotency-key': `load-${i}` },
        body: JSON.stringify({ product: 'stars', recipient: i % 10 === 0 ? '@test_failed' : '@durov', quantity: 50 }),
      });
      const body = (await response.json()) as { id: string };
      expect(response.status, JSON.stringify(body)).toBe(201);
      acknowledged.push({ id: body.id, at: performance.now() });
      // Paced so that the load lasts longer than the backup does.
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Start the backup in the middle of the load, once some orders exist.
      if (acknowledged.length >= 60 && backupStartedAt === Number.POSITIVE_INFINITY) {
        backupStartedAt = performance.now();
        backupPromise = cli(['backup', '--to', backupFile, '--json']).then((r) => {
          backupResult = r;
          backupEndedAt = performance.now();
        });
      }
    };
    let backupPromise: Promise<void> | undefined;
    // Eight clients create orders until at least 200 exist and the backup has finished, so the
    // backup always runs under load however long it takes on this machine.
    let next = 0;
    const client = async () => {
      while (next < 200 || backupEndedAt === Number.POSITIVE_INFINITY) await create(next++);
    };
    await Promise.all(Array.from({ length: 8 }, client));
    await backupPromise;
    expect(backupResult).toBeDefined();
    const backupRun = backupResult as NonNullable<typeof backupResult>;
    expectExit(['backup'], backupRun, 0);
    const document = parseJsonStdout(backupRun);
    expect(document).toMatchObject({ ok: true, file: backupFile, ledger_ok: true });
    expect(document.counts.orders).toBeGreaterThanOrEqual(60);
    expect(acknowledged.length).toBeGreaterThanOrEqual(200);
    // Orders were still being created while the backup ran.
    expect(acknowledged.filter((o) => o.at > backupStartedAt && o.at < backupEndedAt).length).toBeGreaterThan(0);

    // A backup is one self-contained file.
    expect(fs.existsSync(`${backupFile}-wal`)).toBe(false);

    // Restore it into a new DATA_DIR and check it like an operator would.
    const restoredDir = path.join(work, 'restored');
    const restoredCli = cliFor({ DATA_DIR: restoredDir, STARPORT_ACTOR: 'restore-drill' });
    const restored = await ok(restoredCli, ['restore', '--from', backupFile, '--reason', 'drill', '--json']);
    expect(restored).toMatchObject({ ok: true, previous: null, migrated: [] });
    expect(await ok(restoredCli, ['ledger', 'verify', '--json'])).toEqual({ ok: true });

    const raw = new SqliteDatabase(path.join(restoredDir, SQLITE_FILE_NAME), { readonly: true });
    try {
      const ids = new Set((raw.prepare('select id from orders').all() as { id: string }[]).map((r) => r.id));
      const before = acknowledged.filter((o) => o.at < backupStartedAt);
      expect(before.length).toBeGreaterThanOrEqual(60);
      const missing = before.filter((o) => !ids.has(o.id));
      expect(missing, 'orders acknowledged (201) before the backup started').toEqual([]);
      expect(ids.size).toBe(document.counts.orders);
    } finally {
      raw.close();
    }
    const audit = (await ok(restoredCli, ['audit', 'list', '--action', 'database.restore', '--json'])).entries;
    expect(audit).toEqual([expect.objectContaining({ actor: 'restore-drill', reason: 'drill', details: { from: backupFile } })]);

    // The live database, still serving, verifies too once the load settles.
    expect(await ok(cli, ['ledger', 'verify', '--json'])).toEqual({ ok: true });
  });

  test('restore refuses while the service has the database open, and works once it is stopped', async () => {
    if (!serve) serve = await startServe({ ...fresh.env });
    const backupFile = path.join(work, 'for-restore.sqlite');
    await ok(cli, ['backup', '--to', backupFile, '--json']);
    const account = await createAccount(cli); // after the backup: gone once restored

    const refused = await fails(cli, ['restore', '--from', backupFile, '--json'], /in use by another process.*stop it/);
    expect(parseJsonStdout(refused).error.message).toMatch(/starport serve/);
    // The service is untouched and still answers.
    const health = await fetch(`${serve.url}/api/v1/balance`, { headers: { authorization: `Bearer ${account.test_key}` } });
    expect(health.status).toBe(200);

    const exit = await serve.stop();
    expect(exit.code).toBe(0);
    serve = undefined;
    const restored = await ok(cli, ['restore', '--from', backupFile, '--reason', 'roll back', '--json']);
    expect(restored.previous).toMatch(/starport\.sqlite\.before-restore-/);
    expect(fs.existsSync(restored.previous)).toBe(true);
    await fails(cli, ['account', 'show', account.account_id, '--json'], /no account/);
    expect(await ok(cli, ['ledger', 'verify', '--json'])).toEqual({ ok: true });

    // The service starts on the restored database.
    serve = await startServe({ ...fresh.env });
    const response = await fetch(`${serve.url}/api/v1/balance`, { headers: { authorization: `Bearer ${account.test_key}` } });
    expect(response.status).toBe(401);
    await serve.stop();
    serve = undefined;
  });

  test('restore checks the file first: missing, not SQLite, not Starport, or from a newer version', async () => {
    const notSqlite = path.join(work, 'notes.txt');
    fs.writeFileSync(notSqlite, 'hello, this is not a database at all');
    const otherSqlite = path.join(work, 'other.sqlite');
    const other = new SqliteDatabase(otherSqlite);
    other.exec('create table things (x)');
    other.close();
    const newer = path.join(work, 'newer.sqlite');
    await ok(cli, ['backup', '--to', newer, '--json']);
    const edit = new SqliteDatabase(newer);
    edit.prepare("insert into kysely_migration (name, timestamp) values ('9999-future', '2999-01-01T00:00:00.000Z')").run();
    edit.close();

    const target = makeTempDir('starport-restore-target-');
    try {
      const targetCli = cliFor({ DATA_DIR: target });
      await fails(targetCli, ['restore', '--from', path.join(work, 'nope.sqlite'), '--json'], /no file/);
      await fails(targetCli, ['restore', '--from', work], /not a file/);
      await fails(targetCli, ['restore', '--from', notSqlite, '--json'], /not a SQLite database/);
      await fails(targetCli, ['restore', '--from', otherSqlite], /not a Starport database/);
      await fails(targetCli, ['restore', '--from', newer, '--json'], /newer than this version/);
      await fails(targetCli, ['restore', '--json'], /--from/);
      expect(fs.existsSync(path.join(target, SQLITE_FILE_NAME))).toBe(false);
    } finally {
      removeDir(target);
    }
  });

  test('backup refuses to overwrite a file unless --force, and refuses a missing database', async () => {
    const file = path.join(work, 'twice.sqlite');
    const first = await ok(cli, ['backup', '--to', file]);
    expect(first.stdout).toMatch(/backup written to .*twice\.sqlite .*ledger ok/);
    await fails(cli, ['backup', '--to', file, '--json'], /already exists.*--force/);
    expect((await ok(cli, ['backup', '--to', file, '--force', '--json'])).ok).toBe(true);
    await fails(cli, ['backup', '--json'], /--to/);
    // `backup FILE` is `backup --to FILE`: the same checks, the same refusal to overwrite.
    const positional = path.join(work, 'positional.sqlite');
    expect(await ok(cli, ['backup', positional, '--json'])).toMatchObject({ ok: true, file: positional, ledger_ok: true });
    await fails(cli, ['backup', positional], /already exists.*--force/);
    await fails(cli, ['backup', positional, '--to', file], /FILE or --to FILE/);
    await fails(cli, ['backup', positional, 'extra'], /unexpected argument "extra"/);
    const empty = makeTempDir('starport-nodb-');
    try {
      await fails(cliFor({ DATA_DIR: empty }), ['backup', '--to', path.join(work, 'x.sqlite')], /no database at/);
    } finally {
      removeDir(empty);
    }
  });
});

describe.skipIf(testEngine !== 'postgres')('backup and restore on PostgreSQL point to pg_dump', () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase();
  });
  afterAll(async () => {
    await fresh?.dispose();
  });

  test.each([[['backup', '--to', '/tmp/never-written.sqlite', '--json']], [['restore', '--from', '/tmp/never-read.sqlite']]])(
    '%j exits 1 with the pg_dump / pg_restore procedure',
    async (args) => {
      const result = await fails(operatorCli(fresh), args, /PostgreSQL.*pg_dump/s);
      expect(result.stderr).toMatch(/pg_restore/);
      expect(fs.existsSync('/tmp/never-written.sqlite')).toBe(false);
    },
  );
});
