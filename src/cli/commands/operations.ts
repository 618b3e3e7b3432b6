import path from 'node:path';
import { listAudit, recordAudit } from '../../audit/audit.js';
import { loadConfig } from '../../config.js';
import { MODES } from '../../domain/api-key.js';
import { copySqliteToPostgres, redact } from '../../operator/copy.js';
import { backupSqlite, restoreSqlite } from '../../operator/sqlite-backup.js';
import { collectStats, startOfUtcDay } from '../../operator/stats.js';
import { type Command, type CommandIo, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, auditJson, auditTable, actorOption, limitOf, operatorCommand, optionalReasonOf, optionalWhen, refuse, table, time, ton } from '../operator.js';

const PG_DUMP_HELP =
  'DATABASE_URL is set: the data lives in PostgreSQL, which this command does not handle. Back it up with pg_dump, e.g.\n' +
  '  pg_dump --format=custom --file=starport-$(date +%F).dump "$DATABASE_URL"\n' +
  'and restore into an empty database with pg_restore --no-owner --dbname="$DATABASE_URL" FILE (see docs/operations-embedded.md).';

function postgresRefusal(io: CommandIo): number {
  return refuse(io, PG_DUMP_HELP);
}

export const backup: Command = operatorCommand({
  path: ['backup'],
  summary: 'Back up the embedded SQLite database to a file, online (safe while `serve` runs)',
  usage:
    'starport backup FILE [--force] [--json]   (or --to FILE)\n\n' +
    "Uses SQLite's backup API: one consistent snapshot (every transaction committed before it started, nothing half-done),\n" +
    'without stopping the service. The file is checked (integrity, ledger verify) before it is put in place; --force replaces\n' +
    'an existing FILE. For PostgreSQL (DATABASE_URL set) use pg_dump.',
  options: { to: { type: 'string' }, force: { type: 'boolean' } },
  positionals: ['file'],
  async run(values, io) {
    if (typeof values.file === 'string' && typeof values.to === 'string') throw new UsageError('give the backup file once: FILE or --to FILE');
    const to = typeof values.file === 'string' ? values.file : required(values, 'to');
    const config = loadConfig();
    if (config.databaseUrl) return postgresRefusal(io);
    const result = await backupSqlite(config.dataDir, to, { overwrite: values.force === true });
    if (result.ledger.length > 0) {
      process.stderr.write(`warning: the database fails ledger verify (${result.ledger.length} violation(s)); the backup is a faithful copy of it\n`);
    }
    io.result(
      {
        ok: true,
        file: result.file,
        bytes: result.bytes,
        migrations: result.migrations,
        counts: result.counts,
        ledger_ok: result.ledger.length === 0,
        duration_ms: result.durationMs,
      },
      `backup written to ${result.file} (${result.bytes} bytes, ${result.counts.accounts} accounts, ${result.counts.orders} orders) in ${result.durationMs} ms; ledger ${result.ledger.length === 0 ? 'ok' : 'FAILS verify'}`,
    );
    return 0;
  },
});

export const restore: Command = operatorCommand({
  path: ['restore'],
  summary: 'Replace the embedded SQLite database with a backup (the service must be stopped)',
  usage:
    'starport restore --from FILE [--reason TEXT] [--force] [--actor NAME] [--json]\n\n' +
    'Refuses while any process has the database open (stop `starport serve` first). The backup is checked first:\n' +
    'a SQLite file, intact, a Starport database, not newer than this version, passing ledger verify (--force restores\n' +
    'one that fails verify). An older backup is migrated. The replaced database is kept beside it as\n' +
    "starport.sqlite.before-restore-<time>; the restore is recorded in the restored database's audit log.\n" +
    'For PostgreSQL (DATABASE_URL set) use pg_restore.\n' +
    ACTOR_HELP,
  options: { from: { type: 'string' }, reason: { type: 'string' }, force: { type: 'boolean' }, ...actorOption },
  async run(values, io) {
    const from = required(values, 'from');
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    const config = loadConfig();
    if (config.databaseUrl) return postgresRefusal(io);
    const now = Date.now();
    const result = await restoreSqlite(config.dataDir, from, {
      now,
      allowLedgerViolations: values.force === true,
      record: (db) => recordAudit(db, { actor, action: 'database.restore', reason, details: { from: path.resolve(from) }, now }),
    });
    io.result(
      { ok: true, restored_from: result.from, file: result.file, previous: result.previous, migrated: result.migrated, counts: result.counts },
      `restored ${result.file} from ${result.from} (${result.counts.accounts} accounts, ${result.counts.orders} orders)` +
        (result.previous ? `\nthe replaced database is kept as ${result.previous}` : '') +
        (result.migrated.length > 0 ? `\nmigrated: ${result.migrated.join(', ')}` : '') +
        '\nstart the service again.',
    );
    return 0;
  },
});

export const stats: Command = operatorCommand({
  path: ['stats'],
  summary: 'Accounts, balances held, reserved, orders by status today, revenue for a period',
  usage:
    'starport stats [--since WHEN] [--until WHEN] [--json]\n\n' +
    'Revenue is the sum of delivered order amounts posted (debited) in [--since, --until): by default today (UTC) so far.\n' +
    'WHEN: a UTC date (2026-01-31), an RFC 3339 time, today, or a duration ago (30m, 24h, 7d).',
  options: { since: { type: 'string' }, until: { type: 'string' } },
  async run(values, io) {
    const now = Date.now();
    const since = optionalWhen(values, 'since', now) ?? startOfUtcDay(now);
    const until = optionalWhen(values, 'until', now) ?? now + 1;
    if (until <= since) throw new UsageError('--until must be after --since');
    const s = await withDatabase((db) => collectStats(db.kysely, { since, until }, now));
    const perMode = <T, R>(record: Record<'live' | 'test', T>, f: (v: T) => R) => Object.fromEntries(MODES.map((m) => [m, f(record[m])])) as Record<'live' | 'test', R>;
    const document = {
      accounts: s.accounts,
      balances: perMode(s.balances, (b) => ({ available: ton(b.available), reserved: ton(b.reserved), currency: 'TON' })),
      orders_today: { since: time(s.ordersToday.since), ...perMode(s.ordersToday.counts, (c) => c) },
      open_orders: s.open,
      revenue: {
        since: time(s.revenue.since),
        until: time(s.revenue.until),
        ...perMode(s.revenue.byMode, (r) => ({ amount: ton(r.amount), currency: 'TON', orders: r.orders })),
      },
    };
    const text = [
      `accounts: ${s.accounts.total} (${s.accounts.active} active, ${s.accounts.disabled} disabled)`,
      `live balances held: ${document.balances.live.available} TON available, ${document.balances.live.reserved} TON reserved`,
      `test balances: ${document.balances.test.available} TON available, ${document.balances.test.reserved} TON reserved`,
      '',
      `orders created today (since ${document.orders_today.since}):`,
      table(
        ['MODE', ...Object.keys(s.ordersToday.counts.live)],
        MODES.map((m) => [m, ...Object.values(s.ordersToday.counts[m])]),
      ),
      '',
      `open now: live ${s.open.live.fulfillment_pending} queued, ${s.open.live.processing} processing; test ${s.open.test.fulfillment_pending} queued, ${s.open.test.processing} processing`,
      '',
      `revenue ${document.revenue.since} → ${document.revenue.until}: live ${document.revenue.live.amount} TON (${document.revenue.live.orders} orders delivered); test ${document.revenue.test.amount} TON (${document.revenue.test.orders})`,
    ].join('\n');
    io.result(document, text);
    return 0;
  },
});

export const auditList: Command = operatorCommand({
  path: ['audit', 'list'],
  summary: 'Show the audit log of operator actions, newest first',
  usage:
    'starport audit list [--account ACCOUNT_ID] [--order ORDER_ID] [--action ACTION] [--actor NAME] [--since WHEN] [--until WHEN] [--limit N (50)] [--json]\n\n' +
    'ACTION: account.create, account.disable, account.enable, key.reissue, key.revoke, balance.credit, balance.debit,\n' +
    'order.resolve, database.restore, deposit.assign, deposit.return.',
  options: {
    account: { type: 'string' },
    order: { type: 'string' },
    action: { type: 'string' },
    actor: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(values, io) {
    const now = Date.now();
    const text = (name: string) => {
      const value = values[name];
      if (value === undefined) return undefined;
      if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
      return value;
    };
    const filter = {
      accountId: text('account'),
      orderId: text('order'),
      action: text('action'),
      actor: text('actor'),
      since: optionalWhen(values, 'since', now),
      until: optionalWhen(values, 'until', now),
      limit: limitOf(values, 50),
    };
    const entries = (await withDatabase((db) => listAudit(db.kysely, filter))).map(auditJson);
    io.result({ entries }, entries.length === 0 ? 'no audit entries' : auditTable(entries));
    return 0;
  },
});

export const dbCopy: Command = operatorCommand({
  path: ['db', 'copy'],
  summary: 'Copy the embedded SQLite database into an empty PostgreSQL database (the move to PostgreSQL)',
  usage:
    'starport db copy --to postgres://USER:PASSWORD@HOST:PORT/DATABASE [--json]\n\n' +
    "Reads DATA_DIR's SQLite database (stop the service first: it is held exclusively while read) and writes every\n" +
    'table, in foreign-key order, into the PostgreSQL database, which must be empty (it is migrated first), in one\n' +
    'transaction. Then checks row counts and balances against the source and runs ledger verify on the target.\n' +
    'Afterwards set DATABASE_URL to that database. Run it with DATABASE_URL unset. See docs/operations-embedded.md.',
  options: { to: { type: 'string' } },
  async run(values, io) {
    const to = required(values, 'to');
    if (!/^postgres(ql)?:\/\//.test(to)) throw new UsageError('--to must be a postgres:// URL');
    const config = loadConfig();
    if (config.databaseUrl) {
      throw new UsageError('db copy reads the embedded SQLite database of DATA_DIR: run it with DATABASE_URL unset');
    }
    const result = await copySqliteToPostgres(config.dataDir, to);
    const ok = result.ledger.length === 0;
    io.result(
      { ok, source: result.source, target: result.target, tables: result.tables, ledger_ok: ok, violations: result.ledger, duration_ms: result.durationMs },
      [
        `copied ${result.source} → ${redact(to)} in ${result.durationMs} ms:`,
        table(
          ['TABLE', 'ROWS'],
          result.tables.map((t) => [t.name, t.rows]),
        ),
        ok ? 'ledger verify on the target: ok. Set DATABASE_URL to the target and start the service.' : `ledger verify on the target FAILS (${result.ledger.length} violations)`,
      ].join('\n'),
    );
    return ok ? 0 : 1;
  },
});
