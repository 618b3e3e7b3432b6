import { PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Engine } from './engine.js';

/**
 * PostgreSQL, the scale-out engine. Everything that differs from SQLite is in this file:
 * int8 parsing, error codes, row locks for the queue claim, append-only triggers.
 */
const INT8_OID = 20;

/** int8 as bigint (pg's default is a string), per pool rather than pg's global type table. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => BigInt(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function postgresPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, types: types as pg.CustomTypesConfig });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

export function postgresDialect(pool: pg.Pool): PostgresDialect {
  return new PostgresDialect({ pool });
}

const pgCode = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

export const postgresEngine: Engine = {
  name: 'postgres',
  immutableTableSql: (table) => [
    `create or replace function starport_forbid_change() returns trigger language plpgsql as $$
       begin raise exception '% rows are immutable', tg_table_name; end $$`,
    `create trigger ${table}_immutable before update or delete on ${table} for each row execute function starport_forbid_change()`,
  ],
  isUniqueViolation: (error) => pgCode(error) === '23505',
  // serialization_failure, deadlock_detected, lock_not_available: the work can be retried.
  isBusy: (error) => ['40001', '40P01', '55P03'].includes(pgCode(error) ?? ''),
  lockForClaim: (query) => query.forUpdate().skipLocked() as typeof query,
};
