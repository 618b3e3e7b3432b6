import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticate } from '../../src/accounts/accounts.js';
import type { Mode } from '../../src/domain/api-key.js';
import { openDatabase } from '../../src/db/open.js';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type CliResult, cliFor, describeRun, makeTempDir, parseJsonStdout, removeDir } from '../support/cli.js';

/**
 * The operator CLI, run as the real `bin/starport` child process (compiled dist/: run
 * `npm run build` first). One temporary DATA_DIR for the whole file; each test makes its own
 * accounts (unique e-mails), so tests do not depend on each other.
 */
const KEY = /^sk_(live|test)_[0-9A-Za-z]{38}$/;
const COMMANDS = [
  ['serve'],
  ['migrate'],
  ['account', 'create'],
  ['key', 'reissue'],
  ['balance', 'credit'],
  ['ledger', 'verify'],
] as const;

let dataDir: string;
let cli: ReturnType<typeof cliFor>;
let emailCounter = 0;
const email = () => `cli-${process.pid}-${++emailCounter}@example.com`;

beforeAll(() => {
  dataDir = makeTempDir('starport-cli-');
  cli = cliFor(dataDir);
});

afterAll(() => removeDir(dataDir));

function expectExit(args: string[], result: CliResult, code: number) {
  expect(result.code, describeRun(args, result)).toBe(code);
}

/** Runs a command and expects it to succeed; with --json returns the parsed document. */
async function ok(args: string[]): Promise<any> {
  const result = await cli(args);
  expectExit(args, result, 0);
  return args.includes('--json') ? parseJsonStdout(result) : result;
}

/** Runs a command that must fail with exit 1 and a message on stderr, no stack trace. */
async function fails(args: string[], messagePattern?: RegExp): Promise<CliResult> {
  const result = await cli(args);
  expectExit(args, result, 1);
  expect(result.stderr.trim(), describeRun(args, result)).not.toBe('');
  expect(result.stderr, describeRun(args, result)).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
  if (messagePattern) expect(result.stderr, describeRun(args, result)).toMatch(messagePattern);
  if (args.includes('--json')) {
    const document = parseJsonStdout(result);
    expect(document, describeRun(args, result)).toMatchObject({ ok: false });
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
  const db = await openDatabase({ dataDir });
  try {
    return await readBalance(db.kysely, { accountId, mode });
  } finally {
    await db.close();
  }
}

describe('help and command dispatch', () => {
  test.each([[['--help']], [['-h']], [['help']]])('top-level %j prints the overview and exits 0', async (args) => {
    const result = await ok(args);
    expect(result.stdout).toMatch(/usage: starport <command>/);
    for (const command of COMMANDS) expect(result.stdout).toContain(command.join(' '));
  });

  test.each(COMMANDS.map((c) => [c.join(' '), c]))('`%s --help` prints its usage and exits 0', async (_name, command) => {
    // serve --help must print and exit, not start a server (the runner's timeout would catch a hang).
    const args = [...command, '--help'];
    const result = await cli(args, { timeoutMs: 15_000 });
    expectExit(args, result, 0);
    expect(result.stdout).toContain(`usage: starport ${command.join(' ')}`);
    expect(result.stderr).toBe('');
  });

  test('--help on a command does not touch the database', async () => {
    const fresh = makeTempDir('starport-cli-help-');
    try {
      const result = await cliFor(path.join(fresh, 'data'))(['account', 'create', '--email', email(), '--help']);
      expect(result.code, describeRun(['account', 'create', '--help'], result)).toBe(0);
      expect(fs.existsSync(path.join(fresh, 'data', SQLITE_FILE_NAME))).toBe(false);
    } finally {
      removeDir(fresh);
    }
  });

  test.each([[['frobnicate']], [['account']], [['account', 'delete']], [['ledger', 'fix']], [['--bogus']]])(
    'unknown command %j exits 1 with the overview on stderr',
    async (args) => {
      const result = await fails(args, /unknown command/);
      expect(result.stderr).toMatch(/usage: starport <command>/);
      expect(result.stdout).toBe('');
    },
  );

  test('an unknown option exits 1 naming it', async () => {
    await fails(['account', 'create', '--email', email(), '--colour', 'red'], /colour/);
    await fails(['ledger', 'verify', '--json', '--fix'], /fix/);
  });

  test('a positional argument is refused', async () => {
    await fails(['account', 'create', email()]);
  });
});

describe('migrate', () => {
  test('creates the schema in a fresh (not yet existing) DATA_DIR, and is idempotent', async () => {
    const root = makeTempDir('starport-cli-migrate-');
    const fresh = path.join(root, 'nested', 'data');
    try {
      const run = cliFor(fresh);
      const first = await run(['migrate', '--json']);
      expectExit(['migrate', '--json'], first, 0);
      expect(parseJsonStdout(first)).toEqual({ ok: true });
      const file = path.join(fresh, SQLITE_FILE_NAME);
      expect(fs.existsSync(file)).toBe(true);
      // Read the schema without our code (which would migrate on open).
      const raw = new BetterSqlite3(file, { readonly: true });
      try {
        const tables = raw
          .prepare("select name from sqlite_master where type = 'table'")
          .all()
          .map((r) => (r as { name: string }).name);
        expect(tables).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'balances', 'journal', 'orders', 'order_events']));
      } finally {
        raw.close();
      }
      const second = await run(['migrate']);
      expectExit(['migrate'], second, 0);
      expect(second.stdout.trim()).not.toBe('');
      // The migrated database is usable by the other commands.
      const verify = await run(['ledger', 'verify', '--json']);
      expectExit(['ledger', 'verify', '--json'], verify, 0);
      expect(parseJsonStdout(verify)).toEqual({ ok: true });
    } finally {
      removeDir(root);
    }
  });

  test('every command migrates a fresh DATA_DIR by itself (account create first)', async () => {
    const root = makeTempDir('starport-cli-fresh-');
    try {
      const args = ['account', 'create', '--email', email(), '--json'];
      const result = await cliFor(path.join(root, 'd'))(args);
      expectExit(args, result, 0);
      expect(parseJsonStdout(result).account_id).toMatch(/^acct_/);
    } finally {
      removeDir(root);
    }
  });
});

describe('account create', () => {
  test('--json prints exactly one document with the account id and both keys', async () => {
    const args = ['account', 'create', '--email', email(), '--json'];
    const result = await cli(args);
    expectExit(args, result, 0);
    const document = parseJsonStdout(result);
    expect(Object.keys(document).sort()).toEqual(['account_id', 'live_key', 'test_key']);
    expect(document.account_id).toMatch(/^acct_[0-9A-Za-z_-]+$/);
    expect(document.live_key).toMatch(KEY);
    expect(document.live_key.startsWith('sk_live_')).toBe(true);
    expect(document.test_key).toMatch(KEY);
    expect(document.test_key.startsWith('sk_test_')).toBe(true);
    expect(result.stderr).toBe('');

    // The keys work, each for its own mode, and both balances start at zero.
    const db = await openDatabase({ dataDir });
    try {
      expect(await authenticate(db, document.live_key)).toEqual({ ok: true, accountId: document.account_id, mode: 'live' });
      expect(await authenticate(db, document.test_key)).toEqual({ ok: true, accountId: document.account_id, mode: 'test' });
      for (const mode of ['live', 'test'] as const) {
        expect(await readBalance(db.kysely, { accountId: document.account_id, mode })).toEqual({ available: 0n, reserved: 0n });
      }
    } finally {
      await db.close();
    }
  });

  test('without --json prints the id and the keys as text', async () => {
    const result = await ok(['account', 'create', '--email', email()]);
    expect(result.stdout).toMatch(/acct_\S+/);
    expect(result.stdout).toMatch(/sk_live_[0-9A-Za-z]{38}/);
    expect(result.stdout).toMatch(/sk_test_[0-9A-Za-z]{38}/);
    expect(() => JSON.parse(result.stdout)).toThrow();
  });

  test('two accounts get different ids and keys', async () => {
    const [a, b] = await Promise.all([createAccount(), createAccount()]);
    expect(a.account_id).not.toBe(b.account_id);
    expect(new Set([a.live_key, a.test_key, b.live_key, b.test_key]).size).toBe(4);
  });

  test('a duplicate e-mail exits 1 with a clear message; --json prints one error document', async () => {
    const address = email();
    await ok(['account', 'create', '--email', address, '--json']);
    const plain = await fails(['account', 'create', '--email', address], /already exists/);
    expect(plain.stdout).toBe('');
    const json = await fails(['account', 'create', '--email', address, '--json'], /already exists/);
    expect(parseJsonStdout(json)).toMatchObject({ ok: false, error: { message: expect.stringMatching(/already exists/) } });
    // E-mail addresses compare case-insensitively.
    await fails(['account', 'create', '--email', address.toUpperCase(), '--json'], /already exists/);
  });

  test('a missing, empty or malformed --email exits 1', async () => {
    await fails(['account', 'create'], /--email/);
    await fails(['account', 'create', '--json'], /--email/);
    await fails(['account', 'create', '--email=', '--json'], /email/);
    await fails(['account', 'create', '--email'], /email/);
    await fails(['account', 'create', '--email', 'not-an-email', '--json'], /e-mail|email/);
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

    const db = await openDatabase({ dataDir });
    try {
      expect(await authenticate(db, account.test_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db, document.key)).toEqual({ ok: true, accountId: account.account_id, mode: 'test' });
      expect(await authenticate(db, account.live_key)).toEqual({ ok: true, accountId: account.account_id, mode: 'live' });
    } finally {
      await db.close();
    }

    // A second reissue revokes the first reissued key too; only the newest works.
    const again = await ok(['key', 'reissue', '--account', account.account_id, '--mode', 'live', '--json']);
    const third = await ok(['key', 'reissue', '--account', account.account_id, '--mode', 'live', '--json']);
    expect(again.key.startsWith('sk_live_')).toBe(true);
    expect(third.key).not.toBe(again.key);
    const db2 = await openDatabase({ dataDir });
    try {
      expect(await authenticate(db2, account.live_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db2, again.key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect(await authenticate(db2, third.key)).toEqual({ ok: true, accountId: account.account_id, mode: 'live' });
      expect(await authenticate(db2, document.key)).toEqual({ ok: true, accountId: account.account_id, mode: 'test' });
    } finally {
      await db2.close();
    }
  });

  test('a bad or missing --mode exits 1 and revokes nothing', async () => {
    const account = await createAccount();
    await fails(['key', 'reissue', '--account', account.account_id, '--mode', 'prod', '--json'], /mode/);
    await fails(['key', 'reissue', '--account', account.account_id, '--mode', 'LIVE'], /mode/);
    await fails(['key', 'reissue', '--account', account.account_id, '--json'], /--mode/);
    const db = await openDatabase({ dataDir });
    try {
      expect((await authenticate(db, account.live_key)).ok).toBe(true);
      expect((await authenticate(db, account.test_key)).ok).toBe(true);
    } finally {
      await db.close();
    }
  });

  test('an unknown or missing --account exits 1', async () => {
    await fails(['key', 'reissue', '--account', 'acct_doesnotexist000000000', '--mode', 'live', '--json'], /acct_doesnotexist000000000/);
    await fails(['key', 'reissue', '--account', 'acct_doesnotexist000000000', '--mode', 'test'], /no account|not found|unknown/i);
    await fails(['key', 'reissue', '--mode', 'live', '--json'], /--account/);
  });
});

describe('balance credit', () => {
  test('credits and debits with exact decimal strings, per mode', async () => {
    const { account_id: id } = await createAccount();
    expect(await credit(id, 'test', '10')).toEqual({ balance: { value: '10', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '0.000000001')).toEqual({ balance: { value: '10.000000001', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '-5')).toEqual({ balance: { value: '5.000000001', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '0.100000000')).toEqual({ balance: { value: '5.100000001', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '-0.000000001')).toEqual({ balance: { value: '5.1', reserved: '0', currency: 'TON' } });
    expect(await credit(id, 'test', '123456789.987654321')).toEqual({ balance: { value: '123456795.087654321', reserved: '0', currency: 'TON' } });
    // The live balance is separate.
    expect(await credit(id, 'live', '2.5')).toEqual({ balance: { value: '2.5', reserved: '0', currency: 'TON' } });
    expect(await balanceOf(id, 'test')).toEqual({ available: 123_456_795_087_654_321n, reserved: 0n });
    expect(await balanceOf(id, 'live')).toEqual({ available: 2_500_000_000n, reserved: 0n });
  });

  test('a debit can take the balance to exactly zero, and the text output names the balance', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'live', '1.5');
    const result = await ok(['balance', 'credit', '--account', id, '--mode', 'live', '--amount=-1.5', '--reason', 'refund']);
    expect(result.stdout).toMatch(/\b0\b/);
    expect(await balanceOf(id, 'live')).toEqual({ available: 0n, reserved: 0n });
  });

  test.each([
    ['0.0000000001', '10 decimal places'],
    ['1.0000000000', '10 decimal places, all zero'],
    ['-0.0000000001', 'negative with 10 decimal places'],
    ['1e3', 'exponent'],
    ['1E3', 'upper-case exponent'],
    ['abc', 'not a number'],
    ['', 'empty'],
    ['0x10', 'hexadecimal'],
    ['1,5', 'decimal comma'],
    ['Infinity', 'Infinity'],
    ['NaN', 'NaN'],
    ['1 000', 'a space'],
    ['--5', 'double minus'],
  ])('--amount=%j (%s) exits 1 and changes nothing', async (amount) => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '7');
    const args = ['balance', 'credit', '--account', id, '--mode', 'test', `--amount=${amount}`, '--reason', 'bad amount', '--json'];
    await fails(args, /amount/);
    expect(await balanceOf(id, 'test')).toEqual({ available: 7_000_000_000n, reserved: 0n });
  });

  test('a negative amount written as a separate argument (--amount -5) exits 1 and changes nothing', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '7');
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount', '-5', '--reason', 'x', '--json'], /amount/);
    expect(await balanceOf(id, 'test')).toEqual({ available: 7_000_000_000n, reserved: 0n });
  });

  test('a missing, empty or blank --reason exits 1 and changes nothing', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '1');
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount', '10', '--json'], /reason/);
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount', '10', '--reason=', '--json'], /reason/);
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount', '10', '--reason', '   ', '--json'], /reason/);
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount', '10'], /reason/);
    expect(await balanceOf(id, 'test')).toEqual({ available: 1_000_000_000n, reserved: 0n });
  });

  test('a missing --amount, a bad --mode, or an unknown account exits 1', async () => {
    const { account_id: id } = await createAccount();
    await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--reason', 'r', '--json'], /--amount/);
    await fails(['balance', 'credit', '--account', id, '--mode', 'sandbox', '--amount', '1', '--reason', 'r', '--json'], /mode/);
    await fails(['balance', 'credit', '--account', id, '--amount', '1', '--reason', 'r', '--json'], /--mode/);
    await fails(['balance', 'credit', '--account', 'acct_nobody00000000000000', '--mode', 'test', '--amount', '1', '--reason', 'r', '--json'], /acct_nobody00000000000000/);
    await fails(['balance', 'credit', '--mode', 'test', '--amount', '1', '--reason', 'r'], /--account/);
    expect(await balanceOf(id, 'test')).toEqual({ available: 0n, reserved: 0n });
    expect(await balanceOf(id, 'live')).toEqual({ available: 0n, reserved: 0n });
  });

  test('a debit below zero exits 1 and leaves the balance unchanged', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '3');
    const result = await fails(['balance', 'credit', '--account', id, '--mode', 'test', '--amount=-3.000000001', '--reason', 'too much', '--json'], /below zero|insufficient|negative/i);
    expect(parseJsonStdout(result)).toMatchObject({ ok: false });
    expect(await balanceOf(id, 'test')).toEqual({ available: 3_000_000_000n, reserved: 0n });
    // A debit from an empty balance (the other mode) also fails.
    await fails(['balance', 'credit', '--account', id, '--mode', 'live', '--amount=-0.000000001', '--reason', 'x'], /below zero|insufficient|negative/i);
    expect(await balanceOf(id, 'live')).toEqual({ available: 0n, reserved: 0n });
    // And the exact amount still works afterwards.
    expect(await credit(id, 'test', '-3')).toEqual({ balance: { value: '0', reserved: '0', currency: 'TON' } });
  });
});

describe('ledger verify', () => {
  test('a clean ledger after credits, debits and reissues verifies: {ok:true}, exit 0', async () => {
    const { account_id: id } = await createAccount();
    await credit(id, 'test', '4.2');
    await credit(id, 'test', '-1.1');
    await credit(id, 'live', '0.5');
    const result = await cli(['ledger', 'verify', '--json']);
    expectExit(['ledger', 'verify', '--json'], result, 0);
    expect(parseJsonStdout(result)).toEqual({ ok: true });
    const text = await ok(['ledger', 'verify']);
    expect(text.stdout).toMatch(/ok/i);
  });
});
