import { expect, vi } from 'vitest';
import { createAccount as createAccountInProcess } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import type { Mode } from '../../src/domain/api-key.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { transitionOrder } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { type CliResult, cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import type { FreshDatabase } from '../support/database.js';

/**
 * Helpers of the operator suites: the real `bin/starport` against a fresh database (either
 * engine), plus in-process access to the same database for set-up and for checking what the
 * CLI did. Run `npm run build` first (npm test does).
 */
export type Cli = ReturnType<typeof cliFor>;

/**
 * Every step here starts a Node process (about a second of CPU); on a loaded CI machine a test
 * of a dozen steps needs far more than the default timeout.
 */
export function allowSlowProcesses(): void {
  vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });
}

/** Runs `task` over `items`, at most `limit` processes at a time (CLI runs are CPU-bound). */
export async function each<T>(items: readonly T[], task: (item: T) => Promise<unknown>, limit = 2): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** A CLI on this database, acting as a fixed, recognisable operator unless told otherwise. */
export function operatorCli(fresh: FreshDatabase, env: Record<string, string | undefined> = {}): Cli {
  return cliFor({ ...fresh.env, STARPORT_ACTOR: 'test-operator', ...env });
}

export function expectExit(args: string[], result: CliResult, code: number): void {
  expect(result.code, describeRun(args, result)).toBe(code);
}

/** Runs a command that must succeed; with --json returns the parsed document, else the result. */
export async function ok(cli: Cli, args: string[]): Promise<any> {
  const result = await cli(args);
  expectExit(args, result, 0);
  return args.includes('--json') ? parseJsonStdout(result) : result;
}

/** Runs a command that must exit 1 with a message on stderr, no stack trace, one JSON document with --json. */
export async function fails(cli: Cli, args: string[], message?: RegExp): Promise<CliResult> {
  const result = await cli(args);
  expectExit(args, result, 1);
  expect(result.stderr.trim(), describeRun(args, result)).not.toBe('');
  expect(result.stderr, describeRun(args, result)).not.toMatch(/\n\s+at .+:\d+:\d+/);
  if (message) expect(result.stderr, describeRun(args, result)).toMatch(message);
  if (args.includes('--json')) expect(parseJsonStdout(result), describeRun(args, result)).toMatchObject({ ok: false, error: { message: expect.any(String) } });
  else expect(result.stdout, describeRun(args, result)).toBe('');
  return result;
}

let emails = 0;
export const email = (tag = 'op') => `${tag}-${process.pid}-${Date.now()}-${++emails}@example.com`;

export interface CreatedAccount {
  account_id: string;
  live_key: string;
  test_key: string;
}

export async function createAccount(cli: Cli, funds: { test?: string; live?: string } = {}): Promise<CreatedAccount> {
  const account = (await ok(cli, ['account', 'create', '--email', email(), '--json'])) as CreatedAccount;
  for (const mode of ['test', 'live'] as const) {
    const amount = funds[mode];
    if (amount) await ok(cli, ['balance', 'credit', '--account', account.account_id, '--mode', mode, `--amount=${amount}`, '--reason', 'test funding', '--json']);
  }
  return account;
}

/** An account made in this process (faster than the CLI), funded with operator credits. */
export async function seedAccount(db: Db, funds: { test?: string; live?: string } = {}): Promise<CreatedAccount> {
  const created = await createAccountInProcess(db, email('seed'));
  for (const mode of ['test', 'live'] as const) {
    const amount = funds[mode];
    if (amount) await adjustBalance(db, { accountId: created.accountId, mode, amount: parseTon(amount), reason: 'test funding' });
  }
  return { account_id: created.accountId, live_key: created.liveKey, test_key: created.testKey };
}

/** The same database in this process (it is migrated already by the CLI). */
export function openFresh(fresh: FreshDatabase): Promise<Db> {
  const config = loadConfig(fresh.env);
  return openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 4 });
}

let keys = 0;

/**
 * An order created by the service's own order code (as POST /orders would), then, unless told
 * otherwise, moved to processing with no next run and no lease: an order held for review.
 */
let lastSeedTime = 0;

export async function seedOrder(db: Db, accountId: string, options: { mode?: Mode; quantity?: number; hold?: boolean; username?: string } = {}): Promise<Order> {
  const config = loadConfig({});
  const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));
  // Each seeded order is at least a millisecond newer than the last: lists sort newest first,
  // and two orders of the same millisecond would be ordered by their random ids.
  const clock = () => (lastSeedTime = Math.max(Date.now(), lastSeedTime + 1));
  const deps = { db, prices, gate: new IdempotencyGate(), liveAvailable: () => true, onCreated: () => undefined, now: clock };
  const { order } = await createOrder(deps, {
    accountId,
    mode: options.mode ?? 'test',
    idempotencyKey: `seed-${process.pid}-${++keys}-${Date.now()}`,
    product: 'stars',
    username: options.username ?? 'durov',
    quantity: options.quantity ?? 50,
    externalId: null,
  });
  if (options.hold === false) return order;
  const now = Date.now();
  expect(await transitionOrder(db.kysely, order, { to: 'processing', nextRunAt: null, now })).toBe(true);
  return { ...order, status: 'processing', updatedAt: now, nextRunAt: null };
}
