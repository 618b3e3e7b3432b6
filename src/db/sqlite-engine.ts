import type { Engine } from './engine.js';

function sqliteCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  immutableTableSql: (table) => [
    `create trigger ${table}_no_update before update on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
    `create trigger ${table}_no_delete before delete on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
  ],
  isUniqueViolation: (error) =>
    ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'].includes(sqliteCode(error) ?? ''),
  lockForClaim: (query) => query,
  isBusy: (error) => (sqliteCode(error) ?? '').startsWith('SQLITE_BUSY'),
};
