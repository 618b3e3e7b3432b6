import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDatabase } from '../../src/db/driver.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { authenticate } from '../../src/accounts/accounts.js';
import type { Mode } from '../../src/domain/api-key.js';
import { openDatabase } from '../../src/db/open.js';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type CliResult, cliFor, describeRun, parseJsonStdout, pool, removeDir } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { startServe } from '../support/serve-process.js';

/**
 * The operator CLI, run as the real `bin/starport` child process (the compiled dist/: run
 * `npm run build` first) against one fresh database for the file (a temporary DATA_DIR on
 * SQLite; a new database when the suite runs on PostgreSQL). Each test makes its own
 * accounts (unique e-mails), so tests do not depend on each other. Every CLI run costs a Node
 * start-up (~0.5 s), so the cases are grouped to keep the number of runs down.
 */
// Every CLI run is a Node start-up: generous limits for a loaded machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const KEY = /^sk_(live|test)_[0-9A-Za-z]{38}$/;
const COMMANDS = [['serve'], ['migrate'], ['account', 'create'], ['key', 'reissue'], ['balance', 'credit'], ['ledger', 'verify']] as const;

let database: FreshDatabase;
let cli: ReturnType<typeof cliFor>;
let emailCounter = 0;
const email = () => `cli-${process.pid}-${Date.now()}-${++emailCounter}@example.com`;

beforeAll(async () => {
  database = await freshDatabase();
  cli = cliFor(database.env);
});

afterAll(async () => {
  await database?.dispose();
});

const open = (fresh: FreshDatabase = database) => openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });

function expectExit(args: string[], result: CliResult, code: number) {
  expect(result.code, describeRun(args, result)).toBe(code);
}

/** Runs a command and expects it to succeed; with --json returns the parsed document. */
async function ok(args: string[]): Promise<any> {
  const result = await cli(args);
  expectExit(args, result, 0);
  return args.includes('--json') ? parseJsonStdout(result) : result;
}

/**
 * Runs a command that must fail: exit 1, a message on stderr and no stack trace; with --json,
 * stdout is exactly one JSON document with ok:false.
 */
async function fails(args: string[], messagePattern?: RegExp, run = cli): Promise<CliResult> {
  const result = await run(args);
  const described = describeRun(args, result);
  expect(result.code, described).toBe(1);
  expect(result.stderr.trim(), described).not.toBe('');
  expect(result.stderr, described).not.toMatch(/\n\s+at .+:\d+:\d+/);
  if (messagePattern) expect(result.stderr, described).toMatch(messagePattern);
  if (args.includes('--json')) {
    expect(parseJsonStdout(result), described).toMatchObject({ ok: false, error: { message: expect.any(String) } });
  }
  return result;
}

async function createAccount(): Promise<{ account_id: string; live_key: string; test_key: string }> {
  return ok(['account', 'create', '--email', email(), '--json']);
}

async function credit(accountId: string, mode: Mode, amount: string): Promise<any> {
  return ok(['balance', 'credit', '--account', accountId, '--mode', mode, `--amount=${amount}`, '--reason', 'test funding', '--json']);
}

/** The balance as the database holds it, read in-process (the CLI has no read command). */
async function balanceOf(accountId: string, mode: Mode) {
  const db = await open();
  try {
    return await readBalance(db.kysely, { accountId, mode });
  } finally {
    await db.close();
  }
}

/** Table names, read without our code (which would migrate on open). */
async function tablesOf(fresh: FreshDatabase): Promise<string[]> {
  if (testEngine === 'postgres') {
    const client = new pg.Client({ connectionString: fresh.env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query('select table_name from information_schema.tables where table_schema = current_schema()');
      return rows.map((r: { table_name: string }) => r.table_name);
    } finally {
      await client.end();
    }
  }
  const file = path.join(fresh.dataDir, SQLITE_FILE_NAME);
  if (!fs.existsSync(file)) return [];
  const raw = new SqliteDatabase(file, { readonly: true });
  try {
    return raw
      .prepare("select name from sqlite_master where type = 'table'")
      .all()
      .map((r) => (r as { name: string }).name);
  } finally {
    raw.close();
  }
}

// Help never touches a database, so it runs once, in the SQLite project, not once per engine.
describe.skipIf(testEngine === 'postgres')('help and command dispatch', () => {
  // Point DATA_DIR at a folder that must not get created. Its parent is made only when the
  // suite runs: the body of a skipped suite still runs (the PostgreSQL project), its hooks not.
  const helpRoot = path.join(os.tmpdir(), `starport-cli-help-${randomUUID()}`);
  const untouched = path.join(helpRoot, 'never-created');
  const helpCli = cliFor({ DATA_DIR: untouched });
  beforeAll(() => fs.mkdirSync(helpRoot));
  afterAll(() => removeDir(helpRoot));

  test.concurrent.each([[['--help']], [['-h']]])('top-level %j prints the overview and exits 0', async (args) => {
    const result = await helpCli(args);
    expectExit(args, result, 0);
    expect(result.stdout).toMatch(/usage: starport <command>/);
    for (const command of COMMANDS) expect(result.stdout).toContain(command.join(' '));
    expect(result.stderr).toBe('');
  });

  test.concurrent.each(COMMANDS.map((c) => [c.join(' '), c]))('`%s --help` prints its usage and exits 0', async (_name, command) => {
    // `serve --help` must print and exit, not start a server: the timeout catches a hang.
    const args = [...command, '--help'];
    const result = await helpCli(args, { timeoutMs: 20_000 });
    expectExit(args, result, 0);
    expect(result.stdout).toContain(`usage: starport ${command.join(' ')}`);
    expect(result.stderr).toBe('');
    expect(fs.existsSync(untouched), 'help must not open (create) the database').toBe(false);
  });

  test.concurrent('unknown command exits 1 with the overview on stderr', async () => {
    const result = await fails(['frobnicate'], /unknown command: frobnicate/, helpCli);
    expect(result.stderr).toMatch(/usage: starport <command>/);
    expect(result.stdout).toBe('');
  });

  test.concurrent('bare `starport` names no command: the overview on stderr, exit 1', async () => {
    const result = await fails([], /usage: starport <command>/, helpCli);
    expect(result.stderr).toContain('account create');
    expect(result.stdout).toBe('');
  });

  /** The groups the overview lists: the first word(s) that several commands share. */
  async function groups(): Promise<string[][]> {
    const overview = await helpCli(['--help']);
    const paths = [...overview.stdout.matchAll(/^ {2}(\S+(?: \S+)*?) {2,}/gm)].map((m) => (m[1] as string).split(' '));
    const prefixes = new Set(paths.flatMap((p) => p.slice(0, -1).map((_, n) => p.slice(0, n + 1).join(' '))));
    return [...prefixes].map((g) => g.split(' '));
  }

  test('`GROUP --help` lists the commands of every group, and only those', { timeout: 180_000 }, async () => {
    const all = await groups();
    expect(all.map((g) => g.join(' '))).toEqual(expect.arrayContaining(['account', 'key', 'balance', 'order', 'deposit', 'fragment', 'fragment session']));
    const overview = (await helpCli(['--help'])).stdout;
    await pool(all, 3, async (group) => {
      const name = group.join(' ');
      const members = [...overview.matchAll(/^ {2}(\S+(?: \S+)*?) {2,}/gm)].map((m) => m[1] as string).filter((p) => p.startsWith(`${name} `));
      expect(members.length, name).toBeGreaterThan(0);
      const args = [...group, '--help'];
      const result = await helpCli(args);
      expectExit(args, result, 0);
      expect(result.stdout).toContain(`usage: starport ${name} <command>`);
      for (const member of members) expect(result.stdout, `${name} --help lists ${member}`).toMatch(new RegExp(`^  ${member} {2,}\\S`, 'm'));
      expect(result.stdout.match(/^ {2}\S/gm)?.length, `${name} --help lists only its own commands`).toBe(members.length);
      expect(result.stderr).toBe('');
    });
    expect(fs.existsSync(untouched), 'help must not open (create) the database').toBe(false);
  });

  test.concurrent('`help GROUP` is `GROUP --help`; `GROUP` alone and `GROUP WRONG` exit 1 with the list on stderr', async () => {
    const help = await helpCli(['help', 'deposit']);
    expectExit(['help', 'deposit'], help, 0);
    expect(help.stdout).toContain('usage: starport deposit <command>');
    expect(help.stdout).toMatch(/^ {2}deposit assign {2,}\S/m);
    const bare = await fails(['account'], /^starport account: name a command/, helpCli);
    expect(bare.stderr).toMatch(/^ {2}account create {2,}\S/m);
    expect(bare.stdout).toBe('');
    const wrong = await fails(['account', 'delete'], /^unknown command: account delete/, helpCli);
    expect(wrong.stderr).toContain('usage: starport account <command>');
    expect(wrong.stderr).not.toMatch(/^ {2}serve /m);
  });

  test.concurrent("`help COMMAND` prints that command's usage", async () => {
    const result = await helpCli(['help', 'backup']);
    expectExit(['help', 'backup'], result, 0);
    expect(result.stdout).toContain('usage: starport backup FILE');
  });

  test.concurrent('an unknown option exits 1 naming it; with --json still one JSON document', async () => {
    await fails(['ledger', 'verify', '--json', '--fix'], /fix/, helpCli);
  });

  test.concurrent('a positional argument is refused', async () => {
    await fails(['account', 'create', 'someone@example.com'], undefined, helpCli);
  });
});

describe('migrate', () => {
  test('creates the schema on a fresh database, is idempotent, and leaves it usable', async () => {
    const fresh = await freshDatabase();
    try {
      // On SQLite the DATA_DIR does not exist yet: migrate creates it.
      const dataDir = path.join(fresh.dataDir, 'nested', 'data');
      const env = { ...fresh.env, DATA_DIR: dataDir };
      const run = cliFor(env);
      expect(await tablesOf({ ...fresh, dataDir, env })).toEqual([]);
      const first = await run(['migrate', '--json']);
      expectExit(['migrate', '--json'], first, 0);
      expect(parseJsonStdout(first)).toEqual({ ok: true });
      expect(await tablesOf({ ...fresh, dataDir, env })).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'balances', 'journal', 'orders', 'order_events']));
      const second = await run(['migrate']);
      expectExit(['migrate'], second, 0);
      expect(second.stdout.trim()).not.toBe('');
      const verify = await run(['ledger', 'verify', '--json']);
      expectExit(['ledger', 'verify', '--json'], verify, 0);
      expect(parseJsonStdout(verify)).toEqual({ ok: true });
    } finally {
      await fresh.dispose();
    }
  });

  test('four processes migrating one fresh database at once all succeed', async () => {
    // A CLI command run while `serve` (or another command) starts on a fresh or older database.
    const fresh = await freshDatabase();
    try {
      const run = cliFor(fresh.env);
      const args = [
        ['migrate', '--json'],
        ['migrate', '--json'],
        ['migrate', '--json'],
        ['account', 'create', '--email', email(), '--json'],
      ];
      const results = await Promise.all(args.map((a) => run(a)));
      for (const [i, result] of results.entries()) expectExit(args[i] as string[], result, 0);
      const verify = await run(['ledger', 'verify', '--json']);
      expect(parseJsonStdout(verify)).toEqual({ ok: true });
    } finally {
      await fresh.dispose();
    }
  });

  test('any command migrates a fresh database by itself (account create first)', async () => {
    const fresh = await freshDatabase();
    try {
      const args = ['account', 'create', '--email', email(), '--json'];
      const result = await cliFor({ ...fresh.env, DATA_DIR: path.join(fresh.dataDir, 'd') })(args);
      expectExit(args, result, 0);
      expect(parseJsonStdout(result).account_id).toMatch(/^acct_/);
    } finally {
      await fresh.dispose();
    }
  });
});

describe('account create', () => {
  test('--json prints exactly one document with the account id, both keys, which work, and a set-password link', async () => {
    const args = ['account', 'create', '--email', email(), '--json'];
    const result = await cli(args, { env: { PUBLIC_URL: 'https://dashboard.example.com' } });
    expectExit(args, result, 0);
    const document = parseJsonStdout(result);
    expect(Object.keys(document).sort()).toEqual(['account_id', 'live_key', 'set_password_expires_at', 'set_password_url', 'test_key']);
    expect(document.set_password_url).toMatch(/^https:\/\/dashboard\.example\.com\/set-password\/[A-Za-z0-9_-]{43}$/);
    expect(document.account_id).toMatch(/^acct_[0-9A-Za-z]+$/);
    expect(document.live_key).toMatch(KEY);
    expect(document.live_key.startsWith('sk_live_')).toBe(true);
    expect(document.test_key).toMatch(KEY);
    expect(document.test_key.startsWith('sk_test_')).toBe(true);
    expect(result.stderr).toBe('');

    const db = await open();
    try {
      expect(await authenticate(db, document.live_key)).toMatchObject({ ok: true, accountId: document.account_id, mode: 'live' });
      expect(await authenticate(db, document.test_key)).toMatchObject({ ok: true, accountId: document.account_id, mode: 'test' });
      for (const mode of ['live', 'test'] as const) {
        expect(await readBalance(db.kysely, { accountId: document.account_id, mode })).toEqual({ available: 0n, reserved: 0n });
      }
    } finally {
      await db.close();
    }
  });

  test('without --json prints the id and the keys as text', async () => {
    const args = ['account', 'create', '--email', email()];
    const result = await cli(args, { env: { PUBLIC_URL: 'https://dashboard.example.com' } });
    expectExit(args, result, 0);
    expect(result.stdout).toMatch(/acct_[0-9A-Za-z]+/);
    expect(result.stdout).toMatch(/sk_live_[0-9A-Za-z]{38}/);
    expect(result.stdout).toMatch(/sk_test_[0-9A-Za-z]{38}/);
    expect(result.stdout).toMatch(/one-time link to set a password[^\n]*\n\S+\/set-password\/[A-Za-z0-9_-]{43}/);
    expect(() => JSON.parse(result.stdout)).toThrow();
  });

  test('without PUBLIC_URL: the account and its keys, no link, and a sentence saying why', async () => {
    const address = email();
    const json = await cli(['account', 'create', '--email', address, '--json']);
    expectExit(['account', 'create'], json, 0);
    expect(parseJsonStdout(json)).toMatchObject({ account_id: expect.stringMatching(/^acct_/), set_password_url: null, set_password_expires_at: null });
    expect(json.stderr).toBe(
      `warning: no dashboard link printed: PUBLIC_URL is not set, so the CLI cannot tell where the dashboard answers; set it to the origin the service is reached at, as for \`starport serve\` (e.g. PUBLIC_URL=http://127.0.0.1:3000); then \`starport account invite --email ${address}\` prints one.\n`,
    );
    const text = await ok(['account', 'create', '--email', email()]);
    expect(text.stdout).toMatch(/^test key: sk_test_\S+\nKeys are shown once; store them now\.\nDashboard: no dashboard link printed: PUBLIC_URL is not set/m);
    expect(text.stdout).not.toContain('/set-password/');
    const db = await open();
    try {
      const accounts = await db.kysely.selectFrom('accounts').select('id').where('email', '=', address).execute();
      expect(accounts).toHaveLength(1);
      expect(
        await db.kysely
          .selectFrom('password_tokens')
          .selectAll()
          .where('account_id', '=', accounts[0]?.id as string)
          .execute(),
      ).toEqual([]);
    } finally {
      await db.close();
    }
  });

  test('a duplicate e-mail exits 1 with a clear message; --json prints one error document', async () => {
    const address = email();
    const first = await ok(['account', 'create', '--email', address, '--json']);
    const plain = await fails(['account', 'create', '--email', address], /already exists/);
    expect(plain.stdout).toBe('');
    const json = await fails(['account', 'create', '--email', address, '--json'], /already exists/);
    expect(parseJsonStdout(json).error.message).toMatch(/already exists/);
    // E-mail addresses compare case-insensitively.
    await fails(['account', 'create', '--email', address.toUpperCase(), '--json'], /already exists/);
    // The first account's keys are untouched by the failed attempts.
    const db = await open();
    try {
      expect((await authenticate(db, first.live_key)).ok).toBe(true);
    } finally {
      await db.close();
    }
  });

  test.concurrent.each([
    [['account', 'create', '--json'], /--email/],
    [['account', 'create', '--email=', '--json'], /email/],
    [['account', 'create', '--email'], /email/],
    [['account', 'create', '--email', 'not-an-email', '--json'], /e-?mail/],
  ])('a missing, empty or malformed --email exits 1: %j', async (args, message) => {
    await fails(args, message);
  });
});

describe('set-password links reach the running server', () => {
  test('a server on a port of its own: invite refuses without PUBLIC_URL, and with it the printed link opens the form', async () => {
    // PORT=0: whatever free port, never the default 3000 the CLI used to assume.
    const serve = await startServe(database.env);
    try {
      expect(new URL(serve.url).port).not.toBe('3000');
      const holder = { email: email() };
      await ok(['account', 'create', '--email', holder.email, '--json']);

      const refused = await fails(
        ['account', 'invite', '--email', holder.email],
        /^error: no link printed: PUBLIC_URL is not set, so the CLI cannot tell where the dashboard answers/,
      );
      expect(refused.stdout).toBe('');

      const args = ['account', 'invite', '--email', holder.email];
      const invited = await cli(args, { env: { PUBLIC_URL: serve.url } });
      expectExit(args, invited, 0);
      const link = /^(http:\/\/\S+\/set-password\/[A-Za-z0-9_-]{43})$/m.exec(invited.stdout)?.[1];
      expect(link, invited.stdout).toBeDefined();
      expect(link?.startsWith(`${serve.url}/set-password/`)).toBe(true);
      const page = await fetch(link as string, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(holder.email);
    } finally {
      await serve.stop();
    }
  });
});

describe('key reissue', () => {
  test('returns a new key of the mode; the old one is revoked at once, the other mode untouched', async () => {
    const account = await createAccount();
    const args = ['key', 'reissue', '--account', account.account_id, '--mode', 'test', '--json'];
    const result = await cli(args);
    expectExit(args, result, 0);
    const document = parseJsonStdout(result);
    expect(Object.keys(document)).toEqual(['key']);
    expect(document.key).toMatch(KEY);
    expect(document.key.startsWith('sk_test_')).toBe(true);
    expect(document.key).not.toBe(account.test_key);

    const db = await open();
    try {
      expect(await authenticate(db, account.test_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db, document.key)).toMatchObject({ ok: true, accountId: account.account_id, mode: 'test' });
      expect(await authenticate(db, account.live_key)).toMatchObject({ ok: true, accountId: account.account_id, mode: 'live' });
    } finally {
      await db.close();
    }

    // Reissuing twice: only the newest key works.
    const again = await ok(['key', 'reissue', '--account', account.account_id, '--mode', 'live', '--json']);
    const third = await ok(['key', 'reissue', '--account', account.account_id, '--mode', 'live', '--json']);
    expect(again.key.startsWith('sk_live_')).toBe(true);
    expect(third.key).not.toBe(again.key);
    const db2 = await open();
    try {
      expect(await authenticate(db2, account.live_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db2, again.key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db2, third.key)).toMatchObject({ ok: true, accountId: account.account_id, mode: 'live' });
      expect(await authenticate(db2, document.key)).toMatchObject({ ok: true, accountId: account.account_id, mode: 'test' });
    } finally {
      await db2.close();
    }
  });

  test('a bad or missing --mode, or an unknown or missing --account, exits 1 and revokes nothing', async () => {
    const account = await createAccount();
    const id = account.account_id;
    await pool(
      [
        [['key', 'reissue', '--account', id, '--mode', 'prod', '--json'], /mode/],
        [['key', 'reissue', '--account', id, '--mode', 'LIVE'], /mode/],
        [['key', 'reissue', '--account', id, '--json'], /--mode/],
        [['key', 'reissue', '--account', 'acct_doesnotexist000000000', '--mode', 'live', '--json'], /acct_doesnotexist000000000/],
        [['key', 'reissue', '--mode', 'live', '--json'], /--account/],
      ] as const,
      3,
      ([args, message]) => fails([...args], message),
    );
    const db = await open();
    try {
      expect((await authenticate(db, account.live_key)).ok).toBe(true);
      expect((await authenticate(db, account.test_key)).ok).toBe(true);
    } finally {
      await db.close();
    }
  });
});

describe('balance credit', () => {
  test('credits and debits with exact decimal strings, per mode, down to exactly zero', async () => {
    const { account_id: id } = await createAccount();
    expect(await credit(id, 'test', '10')).toEqual({ balance: { value: '10', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '0.000000001')).toEqual({ balance: { value: '10.000000001', reserved: '0', currency: 'TON' } });
    // A negative amount must be written --amount=-5 (a separate "-5" looks like an option).
    expect(await credit(id, 'test', '-5')).toEqual({ balance: { value: '5.000000001', reserved: '0', currency: 'TON' } });
    // The live balance is separate.
    expect(await credit(id, 'live', '123456789.987654321')).toEqual({ balance: { value: '123456789.987654321', reserved: '0', currency: 'TON' } });
    // Text output, and a debit to exactly zero.
    const text = await ok(['balance', 'credit', '--account', id, '--mode', 'test', '--amount=-5.000000001', '--reason', 'refund']);
    expect(text.stdout).toMatch(/\b0 TON\b|\b0\b/);
    expect(await balanceOf(id, 'test')).toEqual({ available: 0n, reserved: 0n });
    expect(await balanceOf(id, 'live')).toEqual({ available: 123_456_789_987_654_321n, reserved: 0n });
  });

  describe('rejected input exits 1 and changes nothing', () => {
    let id: string;
    beforeAll(async () => {
      id = (await createAccount()).account_id;
      await credit(id, 'test', '3');
    });

    const base = (amount: string, mode = 'test') => ['balance', 'credit', '--account', '<id>', '--mode', mode, `--amount=${amount}`, '--reason', 'r', '--json'];
    test.concurrent.each([
      ['10 decimal places', base('0.0000000001'), /amount/],
      ['10 decimal places, all zero', base('1.0000000000'), /amount/],
      ['exponent', base('1e3'), /amount/],
      ['not a number', base('abc'), /amount/],
      ['empty amount', base(''), /amount/],
      ['hexadecimal', base('0x10'), /amount/],
      ['Infinity', base('Infinity'), /amount/],
      ['double minus', base('--5'), /amount/],
      ['negative as a separate argument', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--amount', '-5', '--reason', 'r', '--json'], /amount/],
      ['missing --amount', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--reason', 'r', '--json'], /--amount/],
      ['missing --reason', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--amount', '10', '--json'], /reason/],
      ['empty --reason', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--amount', '10', '--reason=', '--json'], /reason/],
      ['blank --reason', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--amount', '10', '--reason', '   ', '--json'], /reason/],
      ['missing --reason, text output', ['balance', 'credit', '--account', '<id>', '--mode', 'test', '--amount', '10'], /reason/],
      ['bad --mode', base('1', 'sandbox'), /mode/],
      ['missing --mode', ['balance', 'credit', '--account', '<id>', '--amount', '1', '--reason', 'r', '--json'], /--mode/],
      [
        'unknown account',
        ['balance', 'credit', '--account', 'acct_nobody00000000000000', '--mode', 'test', '--amount', '1', '--reason', 'r', '--json'],
        /acct_nobody00000000000000/,
      ],
      ['missing --account', ['balance', 'credit', '--mode', 'test', '--amount', '1', '--reason', 'r'], /--account/],
      ['debit below zero', base('-3.000000001'), /below zero|insufficient|negative/i],
      ['debit from an empty balance', base('-0.000000001', 'live'), /below zero|insufficient|negative/i],
    ] as const)('%s', async (_name, args, message) => {
      await fails(
        args.map((a) => (a === '<id>' ? id : a)),
        message,
      );
      expect(await balanceOf(id, 'test')).toEqual({ available: 3_000_000_000n, reserved: 0n });
      expect(await balanceOf(id, 'live')).toEqual({ available: 0n, reserved: 0n });
    });
  });
});

describe('ledger verify', () => {
  test('a clean ledger after credits, debits and reissues verifies: {ok:true}, exit 0', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '4.2');
    await credit(id, 'test', '-1.1');
    const result = await cli(['ledger', 'verify', '--json']);
    expectExit(['ledger', 'verify', '--json'], result, 0);
    expect(parseJsonStdout(result)).toEqual({ ok: true });
    const text = await ok(['ledger', 'verify']);
    expect(text.stdout).toMatch(/ok/i);
  });
});
