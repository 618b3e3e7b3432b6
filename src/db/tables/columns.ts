import type { ColumnType } from 'kysely';

/**
 * Integers come back as bigint on both engines (better-sqlite3 safe-integer mode; pg's int8
 * parser), so every integer column is typed bigint and converted to domain types in the row
 * mappers of each feature. Timestamps are epoch milliseconds.
 */
export type Int = ColumnType<bigint, bigint | number, bigint | number>;
export type NullableInt = ColumnType<bigint | null, bigint | number | null, bigint | number | null>;
