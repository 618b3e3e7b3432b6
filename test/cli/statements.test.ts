import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { formatTon } from '../../src/domain/money.js';
import { parseMonth } from '../../src/statements/month.js';
import { accountStatement, type Statement } from '../../src/statements/statement.js';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type SeededYear, seedYear } from '../support/statement-year.js';

/** `starport statement`, `statement all` and `statement revenue` against a seeded year, as an operator runs them. */

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let database: FreshDatabase;
let db: Db;
let cli: ReturnType<typeof cliFor>;
let first: SeededYear;
let second: SeededYear;

beforeAll(async () => {
  database = await freshDatabase();
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  first = await seedYear(db);
  second = await seedYear(db);
  cli = cliFor(database.env);
});
afterAll(async () => {
  await db?.close();
  await database?.dispose();
});

async function ok(args: string[]) {
  const result = await cli(args);
  expect(result.code, describeRun(args, result)).toBe(0);
  return result;
}

test(`statement: text, --json with the reasons, --csv (${testEngine})`, async () => {
  const text = await ok(['statement', 'show', '--account', first.accountId, '--month', '2025-02']);
  expect(text.stdout).toContain(`statement of ${first.accountId} (live) for 2025-02: complete`);
  expect(text.stdout).toMatch(/deposits USDT\s+1\s+12\.345678 USDT\s+4\.888888488/);
  const json = parseJsonStdout(await ok(['statement', 'show', '--account', first.accountId, '--month', '2025-02', '--json']));
  expect(json).toMatchObject({ ok: true, account_id: first.accountId, month: '2025-02', mode: 'live', adjustments: { items: [{ reason: '=fee, "monthly"' }] } });
  const csv = (await ok(['statement', 'show', '--account', first.accountId, '--month', '2025-02', '--csv'])).stdout;
  expect(csv.split('\r\n')[0]).toBe('section,item,date,count,quantity,amount_ton');
  expect(csv).toContain(`adjustment,"'=fee, ""monthly""",2025-02-07T12:00:00.000Z,1,,-1.000000008`);
  const test = parseJsonStdout(await ok(['statement', 'show', '--account', first.accountId, '--month', '2025-01', '--mode', 'test', '--json']));
  expect(test).toMatchObject({ mode: 'test', deposits: { amount: '50' } });
});

test(`statement all: one CSV row per account, equal to each account's statement (${testEngine})`, async () => {
  const csv = (await ok(['statement', 'all', '--month', '2025-06'])).stdout.split('\r\n');
  expect(csv[0]).toMatch(/^account_id,email,month,complete,/);
  const rows = csv.slice(1).filter((line) => line.startsWith('acct_'));
  const ids = rows.map((line) => line.split(',')[0]);
  expect(ids).toEqual(expect.arrayContaining([first.accountId, second.accountId]));
  const own = (await accountStatement(db.kysely, { accountId: first.accountId, mode: 'live', month: parseMonth('2025-06')! })) as Statement;
  const row = rows[ids.indexOf(first.accountId)]!.split(',');
  const header = csv[0]!.split(',');
  const cell = (name: string) => row[header.indexOf(name)];
  expect([cell('opening_available_ton'), cell('orders_delivered'), cell('orders_delivered_ton'), cell('closing_available_ton'), cell('closing_reserved_ton')]).toEqual([
    formatTon(own.opening.available),
    String(own.delivered.count),
    formatTon(own.delivered.amount),
    formatTon(own.closing.available),
    formatTon(own.closing.reserved),
  ]);
  const json = parseJsonStdout(await ok(['statement', 'all', '--month', '2025-06', '--json']));
  expect(json.statements.map((s: { email: string }) => s.email)).toContain(cell('email'));
});

test(`statement revenue: delivered orders per account and product, with a total (${testEngine})`, async () => {
  const csv = (await ok(['statement', 'revenue', '--month', '2025-03'])).stdout.split('\r\n');
  expect(csv[0]).toBe('month,account_id,email,product,orders_delivered,quantity,amount_ton');
  const json = parseJsonStdout(await ok(['statement', 'revenue', '--month', '2025-03', '--json']));
  const own = (await accountStatement(db.kysely, { accountId: first.accountId, mode: 'live', month: parseMonth('2025-03')! })) as Statement;
  const line = json.lines.find((l: { account_id: string }) => l.account_id === first.accountId);
  expect(line).toMatchObject({ product: 'stars', orders: own.delivered.count });
  expect(json.total.orders).toBe(json.lines.reduce((n: number, l: { orders: number }) => n + l.orders, 0));
  expect(csv.at(-2)).toMatch(new RegExp(`^2025-03,total,,,${json.total.orders},,${json.total.amount.replace('.', '\\.')}$`));
});

test(`bad months and unknown accounts exit 1 with the reason (${testEngine})`, async () => {
  const malformed = await cli(['statement', 'show', '--account', first.accountId, '--month', '2025-13']);
  expect(malformed.code).toBe(1);
  expect(malformed.stderr).toContain('--month must be a month written YYYY-MM, e.g. 2026-10, got "2025-13"');
  const before = await cli(['statement', 'show', '--account', first.accountId, '--month', '2024-12', '--json']);
  expect(before.code).toBe(1);
  expect(parseJsonStdout(before).error.message).toMatch(/^No statement for 2024-12: the account did not exist yet/);
  const future = await cli(['statement', 'all', '--month', '2099-01']);
  expect(future.code).toBe(1);
  expect(future.stderr).toContain('2099-01 has not begun');
  const unknown = await cli(['statement', 'show', '--account', 'acct_nosuch', '--month', '2025-01']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('no account acct_nosuch');
  const help = await ok(['statement', 'show', '--help']);
  expect(help.stdout).toContain('starport statement show --account ACCOUNT_ID --month MONTH');
  expect((await ok(['statement', 'revenue', '--help'])).stdout).toContain('starport statement revenue --month MONTH');
});
