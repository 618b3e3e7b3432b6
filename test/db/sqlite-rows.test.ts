import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqlite, SqliteConnection } from '../../src/db/sqlite.js';

/**
 * SqliteConnection builds row objects in JS from better-sqlite3's raw arrays (docs/performance-history.md "Eighth round"). The
 * rows must be exactly what better-sqlite3's own object rows are: checked here against them,
 * statement by statement, on the same connection.
 */
let dir: string;
let db: BetterSqlite3.Database;
let connection: SqliteConnection;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-rows-'));
  db = openSqlite(dir);
  connection = new SqliteConnection(db);
  db.exec(`create table t (id text primary key, n integer, amount integer, note text, data blob, price real);
    insert into t values ('a', 1, 9007199254740993, null, x'0102', 0.5), ('b', 2, -3, 'two', null, null);`);
});

afterEach(() => {
  connection.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** better-sqlite3's own object rows, from a statement of its own. */
const objectRows = (sql: string, ...parameters: unknown[]) => db.prepare(sql).all(...parameters);

const queries: [string, string, unknown[]][] = [
  ['every column, every type (big integers stay bigint)', 'select * from t order by id', []],
  ['a parameter and an alias', 'select id as key, n + 1 as next from t where id = ?', ['b']],
  ['two columns of one name: the later one wins', 'select id as x, note as x from t order by id', []],
  ['no rows', 'select * from t where id = ?', ['none']],
  ['an expression without an alias', 'select count(*), max(n) from t', []],
];

test.each(queries)('%s: the same rows as better-sqlite3 gives', (_, sql, parameters) => {
  const rows = connection.prepare(sql).all(parameters);
  expect(rows).toStrictEqual(objectRows(sql, ...parameters));
  for (const row of rows as object[]) expect(Object.keys(row)).toEqual(Object.keys(objectRows(sql, ...parameters)[0] as object));
});

test('iterate gives the same rows, one at a time', () => {
  const sql = 'select * from t order by id';
  expect([...connection.prepare(sql).iterate([])]).toStrictEqual(objectRows(sql));
});

test.each([
  ['a blob', "select x'0102' as __proto__, 1 as n"],
  ['null', 'select null as __proto__, 1 as n'],
  ['a string', "select 'x' as __proto__, 1 as n"],
])('a column named __proto__ holding %s does to the row what it does in better-sqlite3', (_, sql) => {
  const [ours] = connection.prepare(sql).all([]) as object[];
  const [theirs] = objectRows(sql) as object[];
  expect(Object.getPrototypeOf(ours)).toStrictEqual(Object.getPrototypeOf(theirs));
  expect(Object.entries(ours!)).toStrictEqual(Object.entries(theirs!));
});

test('writes run as before; a write that returns rows gives them as objects', () => {
  expect(connection.prepare("update t set note = 'seen' where id = ?").run(['a']).changes).toBe(1);
  const returned = connection.prepare('insert into t (id, n) values (?, ?) returning id, n').all(['c', 3]);
  expect(returned).toStrictEqual([{ id: 'c', n: 3n }]);
  expect(objectRows("select note from t where id = 'a'")).toStrictEqual([{ note: 'seen' }]);
});
