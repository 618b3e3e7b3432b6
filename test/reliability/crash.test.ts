import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/engine.js';
import { openConfiguredDatabase } from '../../src/db/open.js';
import { formatTon, parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { type Acknowledged, acknowledgedProblems, invariantProblems } from './support/invariants.js';
import { announceSeed, KILLS, SEED, seededRandom } from './support/settings.js';

/**
 * Suite 3: crash recovery. `bin/starport serve` (API and worker in one process) runs as a child
 * process under load from several clients and is killed with SIGKILL at random moments
 * (RELIABILITY_KILLS times, default 20), then restarted. After each restart the clients first
 * resend every request whose answer they never got, with the same Idempotency-Key (what a
 * careful client does). At the end: every order that got a 201 exists, with its amount, and
 * reached a final state exactly once; no order nobody was told about; no double debit; the
 * ledger verifies; each balance equals funding − deliveries; and the database opens cleanly
 * (SQLite PRAGMA integrity_check, migrations re-run on either engine).
 */
const CLIENTS = 6;
const FUNDING = '500';
const RECIPIENTS = ['@crash_ok', '@Crash_Two', '@test_failed', '@test_invalid'];

let database: FreshDatabase;
let db: Db;
let accountId: string;
let apiKey: string;
let server: ServeProcess | undefined;

const env = () => ({
  ...database.env,
  TEST_FULFILMENT_DELAY_MS: '40',
  WORKER_LEASE_MS: '400',
  RATE_LIMIT_RPS: '0',
  LOG_LEVEL: 'error',
});

beforeAll(async () => {
  announceSeed(`crash (${KILLS} kills)`);
  database = await freshDatabase();
  db = await openConfiguredDatabase(loadConfig(database.env));
  const account = await createAccount(db, `crash-${Date.now()}@example.com`);
  accountId = account.accountId;
  apiKey = account.testKey;
  await adjustBalance(db, { accountId, mode: 'test', amount: parseTon(FUNDING), reason: 'crash suite funding' });
});

afterAll(async () => {
  if (server) await server.stop('SIGKILL');
  await db?.close();
  await database?.dispose();
});

interface Pending {
  key: string;
  body: string;
}

test(`SIGKILL under load, ${KILLS} times: every acknowledged order survives and settles once`, { timeout: 600_000 }, async () => {
  const random = seededRandom(SEED);
  const acknowledged: Acknowledged[] = [];
  /** Requests sent whose answer never came (the connection died with the server). */
  let inDoubt: Pending[] = [];
  const settled = new Set<string>();
  const tally = { created: 0, replayed: 0, refused: 0, lost: 0 };
  let sequence = 0;

  const send = async (origin: string, pending: Pending): Promise<'answered' | 'lost'> => {
    let response: Response;
    try {
      response = await fetch(`${origin}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': pending.key },
        body: pending.body,
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      return 'lost';
    }
    let json: any;
    try {
      json = await response.json();
    } catch {
      return 'lost';
    }
    if (response.status === 201) {
      acknowledged.push({ id: json.id, accountId, idempotencyKey: pending.key, amount: json.amount.value });
      if (response.headers.get('idempotent-replayed') === 'true') tally.replayed++;
      else tally.created++;
    } else if (response.status === 402) {
      tally.refused++;
    } else {
      throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(json)}`);
    }
    settled.add(pending.key);
    return 'answered';
  };

  /** Resends everything in doubt with its original key and body, until each is answered. */
  const resolveInDoubt = async (origin: string) => {
    const still: Pending[] = [];
    for (const pending of inDoubt) if ((await send(origin, pending)) === 'lost') still.push(pending);
    inDoubt = still;
  };

  const startedAt = performance.now();
  for (let kill = 0; kill < KILLS; kill++) {
    server = await startServe(env());
    const origin = server.url;
    await resolveInDoubt(origin);
    let running = true;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      while (running) {
        const pending = { key: `crash-${kill}-${client}-${++sequence}`, body: JSON.stringify({ product: 'stars', recipient: RECIPIENTS[sequence % RECIPIENTS.length], quantity: 50 }) };
        if ((await send(origin, pending)) === 'lost') {
          tally.lost++;
          inDoubt.push(pending);
          return;
        }
      }
    });
    // Kill at a random moment: early (during start-up work and the first orders) to late.
    const delay = 30 + Math.floor(random() * 400);
    await new Promise((resolve) => setTimeout(resolve, delay));
    const exit = await server.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    running = false;
    await Promise.all(clients);
    server = undefined;
  }

  // A last start: answer what is still in doubt, let the worker settle everything, stop cleanly.
  server = await startServe(env());
  await resolveInDoubt(server.url);
  expect(inDoubt, 'every request in doubt was answered after the restart').toEqual([]);
  await expect
    .poll(async () => Number((await db.kysely.selectFrom('orders').select((eb) => eb.fn.countAll().as('n')).where('status', 'in', ['fulfillment_pending', 'processing']).executeTakeFirstOrThrow()).n), {
      timeout: 60_000,
      interval: 100,
    })
    .toBe(0);
  const stopped = await server.stop('SIGTERM');
  server = undefined;
  expect(stopped.killed, 'a clean stop after the crashes').toBe(false);
  const seconds = (performance.now() - startedAt) / 1000;
  console.log(`[crash] ${testEngine}: ${KILLS} SIGKILLs in ${seconds.toFixed(1)} s; ${JSON.stringify(tally)}, ${acknowledged.length} acknowledged`);
  expect(acknowledged.length).toBeGreaterThan(0);

  expect(await invariantProblems(db.kysely, { final: true })).toEqual([]);
  expect(await acknowledgedProblems(db.kysely, acknowledged)).toEqual([]);
  const orders = await db.kysely.selectFrom('orders').select(['id', 'status', 'amount', 'idempotency_key']).execute();
  // Every order in the database is one a client was told about (after resending), and vice versa.
  expect(orders.map((o) => o.id).sort()).toEqual([...new Set(acknowledged.map((a) => a.id))].sort());
  expect(orders.every((o) => settled.has(o.idempotency_key))).toBe(true);
  const delivered = orders.filter((o) => o.status === 'delivered').reduce((sum, o) => sum + BigInt(String(o.amount)), 0n);
  const balance = await db.kysely.selectFrom('balances').select(['available', 'reserved']).where('account_id', '=', accountId).where('mode', '=', 'test').executeTakeFirstOrThrow();
  expect(formatTon(BigInt(String(balance.available)))).toBe(formatTon(parseTon(FUNDING) - delivered));
  expect(String(balance.reserved)).toBe('0');

  // The database opens cleanly: migrations re-run on a fresh connection, and SQLite's own check.
  const reopened = await openConfiguredDatabase(loadConfig(database.env));
  await reopened.close();
  if (testEngine === 'sqlite') {
    const file = path.join(database.dataDir, fileName(database.dataDir));
    const sqlite = new Database(file, { readonly: true });
    try {
      expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      sqlite.close();
    }
  }
});

function fileName(dataDir: string): string {
  const files = fs.readdirSync(dataDir).filter((f) => /\.(db|sqlite3?)$/.test(f));
  if (files.length === 0) throw new Error(`no SQLite file in ${dataDir}: ${fs.readdirSync(dataDir).join(', ')}`);
  return files[0] as string;
}
