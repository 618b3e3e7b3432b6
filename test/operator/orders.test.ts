import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { resolveOrder } from '../../src/orders/admin.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { allowSlowProcesses, type Cli, each, seedAccount, expectExit, fails, ok, openFresh, operatorCli, seedOrder } from './helpers.js';
import { parseJsonStdout } from '../support/cli.js';

allowSlowProcesses();
/**
 * `order list|show|resolve`. Orders are made by the service's own order code in this process
 * (no server runs, so nothing else moves them) and resolved through the real bin/starport.
 */
const PRICE_50_STARS = 250_000_000n; // 0.25 TON with the default prices

let fresh: FreshDatabase;
let cli: Cli;
let db: Db;

beforeAll(async () => {
  fresh = await freshDatabase();
  cli = operatorCli(fresh);
  await ok(cli, ['migrate', '--json']);
  db = await openFresh(fresh);
});

afterAll(async () => {
  await db?.close();
  await fresh?.dispose();
});

async function journalOf(orderId: string) {
  return db.kysely.selectFrom('journal').select(['kind', 'available_delta', 'reserved_delta']).where('order_id', '=', orderId).orderBy('created_at').execute();
}

async function eventsOf(orderId: string) {
  return db.kysely.selectFrom('order_events').select(['type', 'data']).where('order_id', '=', orderId).orderBy('seq').execute();
}

async function auditOf(orderId: string) {
  return (await ok(cli, ['audit', 'list', '--order', orderId, '--json'])).entries;
}

describe('order list', () => {
  test('filters by account, mode, status and time, newest first', async () => {
    const a = await seedAccount(db, { test: '10', live: '10' });
    const b = await seedAccount(db, { test: '10' });
    const held = await seedOrder(db, a.account_id);
    const queued = await seedOrder(db, a.account_id, { hold: false, quantity: 100 });
    const live = await seedOrder(db, a.account_id, { mode: 'live' });
    const other = await seedOrder(db, b.account_id);

    const ofA = await ok(cli, ['order', 'list', '--account', a.account_id, '--json']);
    expect(ofA.orders.map((o: { id: string }) => o.id)).toEqual([live.id, queued.id, held.id]);
    expect(ofA.orders[2]).toEqual({
      id: held.id,
      account_id: a.account_id,
      mode: 'test',
      external_id: null,
      idempotency_key: held.idempotencyKey,
      product: 'stars',
      recipient: '@durov',
      quantity: 50,
      amount: { value: '0.25', currency: 'TON' },
      status: 'processing',
      failure_reason: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    const processing = await ok(cli, ['order', 'list', '--account', a.account_id, '--status', 'processing', '--json']);
    expect(processing.orders.map((o: { id: string }) => o.id)).toEqual([live.id, held.id]);
    const liveOnly = await ok(cli, ['order', 'list', '--account', a.account_id, '--mode', 'live', '--json']);
    expect(liveOnly.orders.map((o: { id: string }) => o.id)).toEqual([live.id]);
    const everyone = await ok(cli, ['order', 'list', '--since', '1h', '--limit', '1000', '--json']);
    expect(everyone.orders.map((o: { id: string }) => o.id)).toEqual(expect.arrayContaining([held.id, queued.id, live.id, other.id]));
    const future = await ok(cli, ['order', 'list', '--since', '2999-01-01', '--json']);
    expect(future.orders).toEqual([]);
    const past = await ok(cli, ['order', 'list', '--until', '2000-01-01T00:00:00Z', '--json']);
    expect(past.orders).toEqual([]);
    const limited = await ok(cli, ['order', 'list', '--account', a.account_id, '--limit', '2', '--json']);
    expect(limited.orders).toHaveLength(2);

    const text = await ok(cli, ['order', 'list', '--account', a.account_id]);
    expect(text.stdout.split('\n')[0]).toMatch(/^ORDER\s+ACCOUNT\s+MODE\s+STATUS/);
    expect(text.stdout).toMatch(new RegExp(`${held.id}.*test.*processing.*stars.*50.*0\\.25.*@durov`));
    expect((await ok(cli, ['order', 'list', '--since', '2999-01-01'])).stdout.trim()).toBe('no orders');
  });

  test('bad input exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['order', 'list', '--status', 'done', '--json'], /--status/],
      [['order', 'list', '--since', 'yesterday', '--json'], /--since/],
      [['order', 'list', '--since', '2026-13-45'], /--since/],
      [['order', 'list', '--mode', 'prod'], /--mode/],
      [['order', 'list', '--limit', '-1'], /limit/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('order show', () => {
  test('shows the order with its events, journal entries, worker state and upstream details', async () => {
    const account = await seedAccount(db, { test: '1' });
    const order = await seedOrder(db, account.account_id);
    const shown = await ok(cli, ['order', 'show', order.id, '--json']);
    expect(Object.keys(shown).sort()).toEqual(['events', 'journal', 'order', 'upstream', 'worker']);
    expect(shown.order).toMatchObject({ id: order.id, account_id: account.account_id, status: 'processing', amount: { value: '0.25' } });
    expect(shown.events.map((e: { type: string }) => e.type)).toEqual(['order.created', 'order.processing']);
    expect(shown.events[0]).toMatchObject({ seq: 1, status: 'fulfillment_pending', data: { amount: '0.25' } });
    expect(shown.journal).toEqual([expect.objectContaining({ kind: 'reserve', available_delta: '-0.25', reserved_delta: '0.25', reason: null })]);
    expect(shown.worker).toEqual({ attempts: 0, next_run_at: null, lease_owner: null, lease_until: null });
    expect(shown.upstream).toBeNull();

    const text = await ok(cli, ['order', 'show', order.id]);
    expect(text.stdout).toContain(`order ${order.id}  processing`);
    expect(text.stdout).toMatch(/order\.created/);
    expect(text.stdout).toMatch(/reserve\s+-0\.25\s+0\.25/);
    expect(text.stdout).toMatch(/upstream: none recorded/);
  });

  test('unknown or missing order exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['order', 'show', 'ord_doesnotexist00000000', '--json'], /no order ord_doesnotexist00000000/],
      [['order', 'show', '--json'], /ORDER_ID/],
      [['order', 'show', 'ord_a', 'ord_b'], /unexpected/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});

describe('order resolve', () => {
  test('--delivered debits the reserve once, records order.delivered and the audit entry; a second run changes nothing', async () => {
    const account = await seedAccount(db, { test: '1' });
    const order = await seedOrder(db, account.account_id);
    const ref = { accountId: account.account_id, mode: 'test' as const };
    expect(await readBalance(db.kysely, ref)).toEqual({ available: 1_000_000_000n - PRICE_50_STARS, reserved: PRICE_50_STARS });

    const args = ['order', 'resolve', order.id, '--delivered', '--reason', 'confirmed with Fragment support', '--actor', 'dave', '--json'];
    const first = await ok(cli, args);
    expect(first.changed).toBe(true);
    expect(first.order).toMatchObject({ id: order.id, status: 'delivered', failure_reason: null });
    expect(await readBalance(db.kysely, ref)).toEqual({ available: 1_000_000_000n - PRICE_50_STARS, reserved: 0n });

    const second = await ok(cli, args);
    expect(second).toMatchObject({ changed: false, order: { status: 'delivered' } });
    const text = await ok(
      cli,
      args.filter((a) => a !== '--json'),
    );
    expect(text.stdout).toMatch(/already delivered; nothing changed/);

    expect(await readBalance(db.kysely, ref)).toEqual({ available: 1_000_000_000n - PRICE_50_STARS, reserved: 0n });
    expect((await journalOf(order.id)).map((j) => j.kind)).toEqual(['reserve', 'debit']);
    expect((await eventsOf(order.id)).map((e) => e.type)).toEqual(['order.created', 'order.processing', 'order.delivered']);
    const audit = await auditOf(order.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'dave',
      action: 'order.resolve',
      account_id: account.account_id,
      mode: 'test',
      order_id: order.id,
      reason: 'confirmed with Fragment support',
      details: { from: 'processing', to: 'delivered', amount: '0.25' },
    });
    expect((await ok(cli, ['ledger', 'verify', '--json'])).ok).toBe(true);
  });

  test('--failed releases the reserve with failure_reason operator_failed; the reason stays internal', async () => {
    const account = await seedAccount(db, { live: '2' });
    const order = await seedOrder(db, account.account_id, { mode: 'live' });
    const ref = { accountId: account.account_id, mode: 'live' as const };
    const text = await ok(cli, ['order', 'resolve', order.id, '--failed', '--reason', 'recipient banned; refund (ticket 991)']);
    expect(text.stdout).toMatch(/is now failed; 0\.25 TON released/);
    expect(await readBalance(db.kysely, ref)).toEqual({ available: 2_000_000_000n, reserved: 0n });
    const shown = await ok(cli, ['order', 'show', order.id, '--json']);
    expect(shown.order).toMatchObject({ status: 'failed', failure_reason: 'operator_failed' });
    const failed = shown.events.at(-1);
    expect(failed).toMatchObject({ type: 'order.failed', status: 'failed', data: { reason: 'operator_failed', amount: '0.25', message: expect.any(String) } });
    expect(failed.data.message).not.toMatch(/ticket 991/);
    expect(shown.journal.map((j: { kind: string }) => j.kind)).toEqual(['reserve', 'release']);

    // The other outcome afterwards is refused, and changes nothing.
    await fails(cli, ['order', 'resolve', order.id, '--delivered', '--reason', 'oops', '--json'], /already failed/);
    expect(await readBalance(db.kysely, ref)).toEqual({ available: 2_000_000_000n, reserved: 0n });
    expect((await auditOf(order.id)).map((e: { details: { to: string } }) => e.details.to)).toEqual(['failed']);
  });

  test.each(['delivered', 'failed'] as const)('two `order resolve --%s` processes at once move the money exactly once', async (outcome) => {
    const account = await seedAccount(db, { test: '1' });
    const order = await seedOrder(db, account.account_id);
    const args = ['order', 'resolve', order.id, `--${outcome}`, '--reason', 'race', '--json'];
    const results = await Promise.all([cli(args), cli(args), cli(args)]);
    for (const r of results) expectExit(args, r, 0);
    const documents = results.map(parseJsonStdout);
    expect(documents.filter((d) => d.changed === true)).toHaveLength(1);
    expect(documents.every((d) => d.order.status === outcome)).toBe(true);
    expect((await journalOf(order.id)).map((j) => j.kind)).toEqual(['reserve', outcome === 'delivered' ? 'debit' : 'release']);
    expect((await eventsOf(order.id)).filter((e) => e.type === `order.${outcome}`)).toHaveLength(1);
    expect(await auditOf(order.id)).toHaveLength(1);
    const balance = await readBalance(db.kysely, { accountId: account.account_id, mode: 'test' });
    expect(balance).toEqual(outcome === 'delivered' ? { available: 1_000_000_000n - PRICE_50_STARS, reserved: 0n } : { available: 1_000_000_000n, reserved: 0n });
  });

  test('ten concurrent resolutions in one process, mixed outcomes: exactly one wins, the ledger verifies', async () => {
    const account = await seedAccount(db, { test: '1' });
    const order = await seedOrder(db, account.account_id);
    const now = Date.now();
    const attempts = Array.from({ length: 10 }, (_, i) =>
      resolveOrder(db.kysely, { orderId: order.id, outcome: i % 2 === 0 ? 'delivered' : 'failed', now }).then(
        (r) => ({ changed: r.changed, status: r.order.status }),
        (e: Error) => ({ error: e.message }),
      ),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => 'changed' in o && o.changed)).toHaveLength(1);
    const journal = await journalOf(order.id);
    expect(journal).toHaveLength(2);
    expect(journal[1]?.kind).toMatch(/^(debit|release)$/);
    expect((await ok(cli, ['ledger', 'verify', '--json'])).ok).toBe(true);
  });

  test('only orders held for review: a queued order is refused; a leased one needs --force', async () => {
    const account = await seedAccount(db, { test: '1' });
    const queued = await seedOrder(db, account.account_id, { hold: false });
    await fails(cli, ['order', 'resolve', queued.id, '--failed', '--reason', 'x', '--json'], /fulfillment_pending/);

    const leased = await seedOrder(db, account.account_id);
    await db.kysely
      .updateTable('orders')
      .set({ lease_owner: 'wrk_test', lease_until: Date.now() + 600_000 })
      .where('id', '=', leased.id)
      .execute();
    await fails(cli, ['order', 'resolve', leased.id, '--failed', '--reason', 'x'], /being worked on by wrk_test/);
    expect((await journalOf(leased.id)).map((j) => j.kind)).toEqual(['reserve']);
    const forced = await ok(cli, ['order', 'resolve', leased.id, '--failed', '--reason', 'worker stuck', '--force', '--json']);
    expect(forced).toMatchObject({ changed: true, order: { status: 'failed' } });
    expect((await auditOf(leased.id))[0].details).toMatchObject({ force: true });
    const shown = await ok(cli, ['order', 'show', leased.id, '--json']);
    expect(shown.worker).toMatchObject({ lease_owner: null, lease_until: null });
  });

  test('bad input exits 1', async () => {
    const cases: [string[], RegExp][] = [
      [['order', 'resolve', 'ord_x', '--reason', 'x', '--json'], /--delivered or --failed/],
      [['order', 'resolve', 'ord_x', '--delivered', '--failed', '--reason', 'x'], /--delivered or --failed/],
      [['order', 'resolve', 'ord_x', '--delivered', '--json'], /--reason/],
      [['order', 'resolve', '--delivered', '--reason', 'x'], /ORDER_ID/],
      [['order', 'resolve', 'ord_doesnotexist00000000', '--delivered', '--reason', 'x', '--json'], /no order ord_doesnotexist00000000/],
      [['order', 'resolve', 'ord_x', '--delivered=yes', '--reason', 'x'], /delivered/],
    ];
    await each(cases, ([args, message]) => fails(cli, args, message));
  });
});
