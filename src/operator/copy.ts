import fs from 'node:fs';
import { type Kysely, sql } from 'kysely';
import { verifyLedger, type Violation } from '../ledger/verify.js';
import { openDatabase } from '../db/open.js';
import type { Database } from '../db/schema.js';
import { holdExclusively, inspectStarportDatabase, sqliteFile, SqliteFileError } from '../db/sqlite-files.js';

/**
 * `starport db copy --to postgres://…`: the move from the embedded SQLite database to
 * PostgreSQL. Every table (accounts, keys, balances, journal, orders, events, audit log, the
 * dashboard's tables) is copied row for row, in foreign-key order, into an empty PostgreSQL
 * database migrated to the same schema, in one transaction: the target ends up with all of it
 * or nothing. The source is held exclusively while it is read (the service must be stopped),
 * and the target is then checked: same row counts, same balances, ledger verify.
 */
export class CopyError extends Error {}

const SKIPPED_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);
const BATCH_ROWS = 500;

export interface CopyResult {
  source: string;
  /** The target URL without its password. */
  target: string;
  tables: { name: string; rows: number }[];
  ledger: Violation[];
  durationMs: number;
}

type Row = Record<string, unknown>;

export async function copySqliteToPostgres(dataDir: string, targetUrl: string): Promise<CopyResult> {
  const started = performance.now();
  const file = sqliteFile(dataDir);
  if (!fs.existsSync(file)) throw new CopyError(`no SQLite database at ${file} (check DATA_DIR)`);

  // Bring the source to this version's schema first (it may come from an older Starport).
  const migrated = await openDatabase({ dataDir });
  await migrated.close();

  const target = await openDatabase({ databaseUrl: targetUrl, dataDir, poolSize: 2 }).catch((error: Error) => {
    throw new CopyError(`cannot open the target database ${redact(targetUrl)}: ${error.message}`);
  });
  let hold: ReturnType<typeof holdExclusively>;
  try {
    hold = holdExclusively(file);
  } catch (error) {
    await target.close();
    throw error;
  }
  try {
    const source = hold.db;
    source.defaultSafeIntegers(true);
    inspectStarportDatabase(source, file);
    const sourceMigrations = names(source.prepare('select name from kysely_migration order by name').all() as { name: string }[]);
    const targetMigrations = names((await sql<{ name: string }>`select name from kysely_migration order by name`.execute(target.kysely)).rows);
    if (sourceMigrations.join() !== targetMigrations.join()) {
      throw new CopyError(`schema versions differ: SQLite has ${sourceMigrations.join(', ')}; PostgreSQL has ${targetMigrations.join(', ')}`);
    }

    const tables = tablesInDependencyOrder(source);
    const targetColumns = await postgresColumns(target.kysely);
    for (const table of tables) {
      const columns = targetColumns.get(table.name);
      if (!columns) throw new CopyError(`table ${table.name} does not exist in the target database`);
      const missing = table.columns.filter((c) => !columns.has(c));
      if (missing.length > 0) throw new CopyError(`table ${table.name} in the target has no column ${missing.join(', ')}`);
    }
    for (const table of tables) {
      const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table.name)}`.execute(target.kysely);
      const n = Number(rows[0]?.n ?? 0);
      if (n > 0) throw new CopyError(`the target database is not empty (table ${table.name} has ${n} rows); copy into a new, empty database`);
    }

    const copied: { name: string; rows: number }[] = [];
    await target.kysely.transaction().execute(async (tx) => {
      for (const table of tables) {
        let count = 0;
        let batch: Row[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          await tx
            .insertInto(table.name as keyof Database)
            .values(batch as never)
            .execute();
          count += batch.length;
          batch = [];
        };
        const quoted = table.columns.map((c) => `"${c}"`).join(', ');
        for (const row of source.prepare(`select ${quoted} from "${table.name}"`).iterate() as Iterable<Row>) {
          batch.push(row);
          if (batch.length >= BATCH_ROWS) await flush();
        }
        await flush();
        copied.push({ name: table.name, rows: count });
      }
      await resetSequences(tx);
    });

    // Check the copy from the committed target, not from what we sent.
    for (const table of copied) {
      const { rows } = await sql<{ n: unknown }>`select count(*) as n from ${sql.table(table.name)}`.execute(target.kysely);
      const n = Number(rows[0]?.n ?? 0);
      if (n !== table.rows) throw new CopyError(`table ${table.name}: ${table.rows} rows copied but ${n} found in the target`);
    }
    const sourceBalances = (source.prepare('select account_id, mode, available, reserved from balances').all() as Row[]).map(balanceKey).sort();
    const targetBalances = (await target.kysely.selectFrom('balances').select(['account_id', 'mode', 'available', 'reserved']).execute()).map((r) => balanceKey(r as Row)).sort();
    if (sourceBalances.join('\n') !== targetBalances.join('\n')) throw new CopyError('balances in the target differ from the source');
    const ledger = await verifyLedger(target.kysely);
    return { source: file, target: redact(targetUrl), tables: copied, ledger, durationMs: Math.round(performance.now() - started) };
  } finally {
    hold.release();
    await target.close();
  }
}

const names = (rows: { name: string }[]) => rows.map((r) => r.name);
const balanceKey = (r: Row) => `${String(r.account_id)} ${String(r.mode)} ${String(r.available)} ${String(r.reserved)}`;

export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

interface SourceTable {
  name: string;
  columns: string[];
}

/** Every data table of the SQLite file, parents before children (foreign keys). */
function tablesInDependencyOrder(db: import('better-sqlite3').Database): SourceTable[] {
  const all = (db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all() as { name: string }[])
    .map((r) => r.name)
    .filter((name) => !SKIPPED_TABLES.has(name));
  const parents = new Map<string, Set<string>>();
  for (const name of all) {
    const refs = db.prepare(`select "table" as parent from pragma_foreign_key_list(?)`).all(name) as { parent: string }[];
    parents.set(name, new Set(refs.map((r) => r.parent).filter((p) => p !== name)));
  }
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (ordered.includes(name)) return;
    if (visiting.has(name)) throw new SqliteFileError(`foreign keys form a cycle through ${name}`);
    visiting.add(name);
    for (const parent of parents.get(name) ?? []) if (parents.has(parent)) visit(parent);
    visiting.delete(name);
    ordered.push(name);
  };
  all.forEach(visit);
  return ordered.map((name) => ({
    name,
    columns: (db.prepare('select name from pragma_table_info(?) order by cid').all(name) as { name: string }[]).map((c) => c.name),
  }));
}

async function postgresColumns(db: Kysely<Database>): Promise<Map<string, Set<string>>> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns where table_schema = current_schema()`.execute(db);
  const map = new Map<string, Set<string>>();
  for (const row of rows) {
    if (!map.has(row.table_name)) map.set(row.table_name, new Set());
    map.get(row.table_name)?.add(row.column_name);
  }
  return map;
}

/** Serial / identity columns (none today) must continue after the copied values. */
async function resetSequences(tx: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = current_schema() and (column_default like 'nextval(%' or is_identity = 'YES')`.execute(tx);
  for (const { table_name: table, column_name: column } of rows) {
    await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)`.execute(tx);
  }
}
