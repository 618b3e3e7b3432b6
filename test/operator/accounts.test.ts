import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authenticate } from '../../src/accounts/accounts.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { cliFor, makeTempDir, parseJsonStdout, removeDir } from '../support/cli.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { allowSlowProcesses, type Cli, each, createAccount, email, expectExit, fails, ok, openFresh, operatorCli } from './helpers.js';

allowSlowProcesses();
/**
 * `account list|show|disable|enable`, `key revoke`, and the audit records of account and key
 * actions, through the real bin/starport against one fresh database (either engine).
 */
const NEW_COMMANDS = [
  ['account', 'list'],
  ['account', 'show'],
  ['account', 'disable'],
  ['account', 'enable'],
  ['key', 'revoke'],
  ['balance', 'debit'],
  ['order', 'list'],
  ['order', 'show'],
  ['order', 'resolve'],
  ['stats'],
  ['audit', 'list'],
  ['backup'],
  ['restore'],
  ['db', 'copy'],
];

let fresh: FreshDatabase;
let cli: Cli;

beforeAll(async () => {
  fresh = await freshDatabase();
  cli = operatorCli(fresh);
  await ok(cli, ['migrate', '--json']);
});

afterAll(async () => {
  await fresh?.dispose();
});

describe('help', () => {
  const root = makeTempDir('starport-op-help-');
  const untouched = path.join(root, 'never-created');
  const helpCli = cliFor({ DATA_DIR: untouched });
  afterAll(() => removeDir(root));

  test('the overview lists every operator command', async () => {
    const result = await helpCli(['--help']);
    expectExit(['--help'], result, 0);
    for (const command of NEW_COMMANDS) expect(result.stdout).toContain(command.join(' '));
  });

  test('every operator command has --help: prints its usage, exits 0, opens no database', async () => {
    await each(NEW_COMMANDS, async (command) => {
      const args = [...command, '--help'];
      const result = await helpCli(args);
      expectExit(args, result, 0);
      expect(result.stdout).toContain(`usage: starport ${command.join(' ')}`);
      expect(result.stdout).toMatch(/--json/);
      expect(result.stderr).toBe('');
    });
    expect(fs.existsSync(untouched)).toBe(false);
  });
});

describe('account list', () => {
  test('lists accounts newest first with both balances; --status filters; text is a table', async () => {
    const a = await createAccount(cli, { live: '12.5', test: '3' });
    const b = await createAccount(cli);
    await ok(cli, ['account', 'disable', b.account_id, '--reason', 'list test', '--json']);

    const all = await ok(cli, ['account', 'list', '--json']);
    expect(Object.keys(all)).toEqual(['accounts']);
    const ids = all.accounts.map((x: { id: string }) => x.id);
    expect(ids.indexOf(b.account_id)).toBeLessThan(ids.indexOf(a.account_id));
    const shownA = all.accounts.find((x: { id: string }) => x.id === a.account_id);
    expect(shownA).toEqual({
      id: a.account_id,
      email: expect.stringMatching(/@example\.com$/),
      status: 'active',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      balances: { live: { value: '12.5', reserved: '0', currency: 'TON' }, test: { value: '3', reserved: '0', currency: 'TON' } },
    });

    const disabled = await ok(cli, ['account', 'list', '--status', 'disabled', '--json']);
    expect(disabled.accounts.map((x: { id: string }) => x.id)).toContain(b.account_id);
    expect(disabled.accounts.every((x: { status: string }) => x.status === 'disabled')).toBe(true);
    const active = await ok(cli, ['account', 'list', '--status', 'active', '--json']);
    expect(active.accounts.map((x: { id: string }) => x.id)).not.toContain(b.account_id);

    const one = await ok(cli, ['account', 'list', '--limit', '1', '--json']);
    expect(one.accounts).toHaveLength(1);

    const text = await ok(cli, ['account', 'list']);
    expect(text.stdout).toMatch(/^ACCOUNT\s+EMAIL\s+STATUS/);
    expect(text.stdout).toContain(a.account_id);
    expect(text.stdout).toMatch(new RegExp(`${a.account_id}.*active.*12\\.5`));
  });

  test('bad input exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['account', 'list', '--status', 'closed', '--json'], /--status/],
      [['account', 'list', '--limit', '0'], /--limit/],
      [['account', 'list', '--limit', '1.5', '--json'], /--limit/],
      [['account', 'list', 'extra'], /unexpected|argument/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('account show', () => {
  test('by id or by e-mail: status, keys (prefixes only), balances, order counts, balance history, audit log', async () => {
    const address = email('show');
    const created = await ok(cli, ['account', 'create', '--email', address, '--json']);
    const id = created.account_id;
    await ok(cli, ['balance', 'credit', '--account', id, '--mode', 'live', '--amount', '7', '--reason', 'wire 42', '--json']);
    await ok(cli, ['key', 'reissue', '--account', id, '--mode', 'test', '--reason', 'rotated', '--json']);

    const shown = await ok(cli, ['account', 'show', id, '--json']);
    expect(Object.keys(shown).sort()).toEqual(['account', 'audit', 'history', 'keys', 'orders']);
    expect(shown.account).toMatchObject({ id, email: address, status: 'active', balances: { live: { value: '7', reserved: '0' } } });
    expect(shown.keys).toHaveLength(3);
    expect(
      shown.keys
        .filter((k: { active: boolean }) => k.active)
        .map((k: { mode: string }) => k.mode)
        .sort(),
    ).toEqual(['live', 'test']);
    for (const key of shown.keys) expect(key.prefix).toMatch(/^sk_(live|test)_[0-9A-Za-z]{4}$/);
    // Never a whole key, anywhere in the output.
    expect(JSON.stringify(shown)).not.toContain(created.live_key);
    expect(JSON.stringify(shown)).not.toMatch(/sk_(live|test)_[0-9A-Za-z]{38}/);
    expect(shown.orders).toEqual({ live: {}, test: {} });
    expect(shown.history).toEqual([expect.objectContaining({ mode: 'live', kind: 'adjustment', available_delta: '7', reserved_delta: '0', reason: 'wire 42', order_id: null })]);
    expect(shown.audit.map((e: { action: string }) => e.action)).toEqual(['key.reissue', 'balance.credit', 'account.create']);

    const byEmail = await ok(cli, ['account', 'show', address.toUpperCase(), '--json']);
    expect(byEmail.account.id).toBe(id);

    const text = await ok(cli, ['account', 'show', id]);
    expect(text.stdout).toContain(`account ${id}`);
    expect(text.stdout).toMatch(/live balance: 7 TON available/);
    expect(text.stdout).toContain('wire 42');
  });

  test('unknown or missing account exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['account', 'show', 'acct_nobody0000000000000', '--json'], /acct_nobody0000000000000/],
      [['account', 'show', 'nobody@example.com'], /nobody@example\.com/],
      [['account', 'show', '--json'], /ACCOUNT_ID/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('account disable / enable', () => {
  test('flips the status (idempotently), keeps everything, refuses the keys, and records who and why', async () => {
    const account = await createAccount(cli, { live: '5' });
    const id = account.account_id;
    const first = await ok(cli, ['account', 'disable', id, '--reason', 'chargeback investigation', '--actor', 'alice', '--json']);
    expect(first).toEqual({ account_id: id, status: 'disabled', changed: true });
    const again = await ok(cli, ['account', 'disable', id, '--reason', 'again', '--json']);
    expect(again).toEqual({ account_id: id, status: 'disabled', changed: false });

    const db = await openFresh(fresh);
    try {
      expect(await authenticate(db, account.live_key)).toEqual({ ok: false, code: 'account_disabled' });
      expect(await authenticate(db, account.test_key)).toEqual({ ok: false, code: 'account_disabled' });
      // Nothing deleted: the balance and the keys are still there.
      expect(await readBalance(db.kysely, { accountId: id, mode: 'live' })).toEqual({ available: 5_000_000_000n, reserved: 0n });
      const keys = await db.kysely.selectFrom('api_keys').select('revoked_at').where('account_id', '=', id).execute();
      expect(keys).toHaveLength(2);
      expect(keys.every((k) => k.revoked_at === null)).toBe(true);
    } finally {
      await db.close();
    }

    const text = await ok(cli, ['account', 'enable', id, '--reason', 'cleared']);
    expect(text.stdout).toMatch(/now active/);
    const db2 = await openFresh(fresh);
    try {
      expect(await authenticate(db2, account.live_key)).toMatchObject({ ok: true, accountId: id, mode: 'live' });
    } finally {
      await db2.close();
    }

    const audit = await ok(cli, ['audit', 'list', '--account', id, '--json']);
    expect(audit.entries.map((e: { action: string }) => e.action)).toEqual(['account.enable', 'account.disable', 'balance.credit', 'account.create']);
    expect(audit.entries[1]).toMatchObject({ actor: 'alice', source: 'cli', reason: 'chargeback investigation', details: { from: 'active', to: 'disabled' } });
    expect(audit.entries[0]).toMatchObject({ actor: 'test-operator', reason: 'cleared', details: { from: 'disabled', to: 'active' } });
  });

  test('bad input exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['account', 'disable', '--reason', 'x', '--json'], /ACCOUNT_ID/],
      [['account', 'disable', 'acct_nobody0000000000000', '--reason', 'x', '--json'], /no account acct_nobody0000000000000/],
      [['account', 'enable', 'acct_nobody0000000000000', '--reason', 'x'], /no account acct_nobody0000000000000/],
      [['account', 'disable', 'acct_x', '--json'], /--reason/],
      [['account', 'disable', 'acct_x', '--reason', '  '], /reason/],
      [['account', 'disable', 'acct_x', '--reason', 'x', '--actor='], /actor/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('key revoke', () => {
  test('revokes one mode without a new key; again is a no-op; reissue gives a key back; audited', async () => {
    const account = await createAccount(cli);
    const id = account.account_id;
    const revoked = await ok(cli, ['key', 'revoke', '--account', id, '--mode', 'live', '--reason', 'leaked in a public repo', '--json']);
    expect(revoked).toEqual({ account_id: id, mode: 'live', revoked_key_prefix: account.live_key.slice(0, 12), changed: true });
    const again = await ok(cli, ['key', 'revoke', '--account', id, '--mode', 'live', '--reason', 'again', '--json']);
    expect(again).toEqual({ account_id: id, mode: 'live', revoked_key_prefix: null, changed: false });

    const db = await openFresh(fresh);
    try {
      expect(await authenticate(db, account.live_key)).toEqual({ ok: false, code: 'api_key_revoked' });
      expect((await authenticate(db, account.test_key)).ok).toBe(true);
      const active = await db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', id).where('mode', '=', 'live').where('revoked_at', 'is', null).execute();
      expect(active).toEqual([]);
    } finally {
      await db.close();
    }

    const reissued = await ok(cli, ['key', 'reissue', '--account', id, '--mode', 'live', '--json']);
    expect(reissued.key).toMatch(/^sk_live_/);
    const audit = await ok(cli, ['audit', 'list', '--account', id, '--json']);
    expect(audit.entries.slice(0, 2)).toEqual([
      expect.objectContaining({ action: 'key.reissue', mode: 'live', reason: null, details: { new_key_prefix: reissued.key.slice(0, 12) } }),
      expect.objectContaining({ action: 'key.revoke', mode: 'live', reason: 'leaked in a public repo', details: { key_prefix: account.live_key.slice(0, 12) } }),
    ]);
  });

  test('bad input exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['key', 'revoke', '--account', 'acct_nobody0000000000000', '--mode', 'live', '--reason', 'x', '--json'], /acct_nobody0000000000000/],
      [['key', 'revoke', '--account', 'acct_x', '--mode', 'prod', '--reason', 'x'], /--mode/],
      [['key', 'revoke', '--account', 'acct_x', '--mode', 'live', '--json'], /--reason/],
      [['key', 'revoke', '--mode', 'live', '--reason', 'x'], /--account/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('who acted', () => {
  test('--actor beats STARPORT_ACTOR, which beats the OS user; the create is audited in its own transaction', async () => {
    const plain = operatorCli(fresh, { STARPORT_ACTOR: undefined });
    const byOs = await ok(plain, ['account', 'create', '--email', email('os'), '--json']);
    const byEnv = await ok(operatorCli(fresh, { STARPORT_ACTOR: 'ops-bot' }), ['account', 'create', '--email', email('env'), '--reason', 'onboarding', '--json']);
    const byFlag = await ok(operatorCli(fresh, { STARPORT_ACTOR: 'ops-bot' }), ['account', 'create', '--email', email('flag'), '--actor', 'carol', '--json']);
    const entries = (await ok(cli, ['audit', 'list', '--action', 'account.create', '--limit', '1000', '--json'])).entries;
    const actorOf = (id: string) => entries.find((e: { account_id: string }) => e.account_id === id)?.actor;
    expect(actorOf(byOs.account_id)).toBe(os.userInfo().username);
    expect(actorOf(byEnv.account_id)).toBe('ops-bot');
    expect(actorOf(byFlag.account_id)).toBe('carol');
    expect(entries.find((e: { account_id: string }) => e.account_id === byEnv.account_id)?.reason).toBe('onboarding');
  });

  test('a refused action writes no audit entry', async () => {
    const before = (await ok(cli, ['audit', 'list', '--limit', '10000', '--json'])).entries.length;
    const result = await cli(['account', 'create', '--email', 'not-an-email', '--json']);
    expect(result.code).toBe(1);
    expect(parseJsonStdout(result).ok).toBe(false);
    await fails(cli, ['balance', 'debit', '--account', 'acct_nobody0000000000000', '--mode', 'live', '--amount', '1', '--reason', 'x']);
    const after = (await ok(cli, ['audit', 'list', '--limit', '10000', '--json'])).entries.length;
    expect(after).toBe(before);
  });
});
