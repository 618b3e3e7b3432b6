import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listAudit } from '../../src/audit/audit.js';
import { parseTon } from '../../src/domain/money.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type SignedInOperator, signedInOperator, totpCode } from '../support/console.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { balanceOf, pollUntil } from '../support/http.js';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.js';

/**
 * The operator console while its database is away (docs/operations.md "Operator console"): a
 * signed-in operator's pages answer 503 with Retry-After and the console's own error page (its
 * link home, no stack, no error text, no secret); the process stays up; once the database is
 * back the same session works again, and a credit tried during the outage was refused whole:
 * retried with the same two-factor code, it is applied once.
 *
 * PostgreSQL: the server is refused and every connection reset by a TCP proxy between the
 * service and it (as test/faults/postgres-connections.test.ts), so reads fail too. SQLite: the
 * service's connection turns read-only (`PRAGMA query_only`, what a file system remounted
 * read-only gives: SQLITE_READONLY on every write). Reads still answer there, so the operator
 * comes back after a minute away, when the console renews the session's last-seen time: that
 * write fails on every page, as a write fails on every form.
 */
const PAGES = ['/', '/accounts', '/orders', '/orders?held=1', '/deposits', '/plans', '/audit'];

describe('the operator console without its database', () => {
  let h: Harness;
  let proxy: TcpFaultProxy | undefined;
  let admin: SignedInOperator;
  let account: TestAccount;

  beforeAll(async () => {
    if (testEngine === 'postgres') {
      const url = new URL(process.env.TEST_DATABASE_URL as string);
      const fault = await startTcpFaultProxy(Number(url.port || 5432), url.hostname);
      proxy = fault;
      // New connections get 2 s and a statement 2 s (the default is 15 s): a quick test.
      h = await startHarness({ OPERATOR_PORT: '0', DATABASE_QUERY_TIMEOUT_MS: '2000' }, { databaseUrl: (databaseUrl) => fault.urlFor(databaseUrl) });
    } else {
      h = await startHarness({ OPERATOR_PORT: '0' });
    }
    admin = await signedInOperator(h, 'admin', '10.46.0.1');
    account = await h.account({ live: '10' });
  });

  afterAll(async () => {
    await databaseBack().catch(() => undefined);
    await h?.close();
    await proxy?.close();
  });

  async function databaseAway(): Promise<void> {
    if (proxy) {
      await proxy.setMode('refuse');
      proxy.resetAll();
      return;
    }
    // Back a minute and more, so that the next request renews the session (a write).
    await h.service.db.kysely
      .updateTable('operator_sessions')
      .set({ last_seen_at: Date.now() - 2 * 60_000 })
      .where('operator_id', '=', admin.operatorId)
      .execute();
    await sql`pragma query_only = 1`.execute(h.service.db.kysely);
  }

  async function databaseBack(): Promise<void> {
    if (proxy) await proxy.setMode('pass');
    else if (h) await sql`pragma query_only = 0`.execute(h.service.db.kysely);
  }

  /** The console's own 503 page: Retry-After, its link home, and nothing of the error or a secret. */
  function expectOutagePage(page: { status: number; body: string; headers: Record<string, unknown> }, what: string): void {
    expect(page.status, `${what}: ${page.body.slice(0, 200)}`).toBe(503);
    expect(Number(page.headers['retry-after']), what).toBeGreaterThanOrEqual(1);
    expect(String(page.headers['content-type'])).toMatch(/^text\/html/);
    expect(page.body).toContain('Temporarily unavailable');
    expect(page.body).toContain('Nothing was changed');
    expect(page.body).toContain('Go to the console home');
    for (const leak of ['SQLITE_', 'ECONNREFUSED', 'ECONNRESET', 'node_modules', '    at ', 'Error:', admin.secret, admin.client.cookies.get('sp_operator') as string]) {
      expect(page.body, `${what} shows ${leak}`).not.toContain(leak);
    }
    if (proxy) expect(page.body).not.toContain(String(proxy.port));
  }

  test('pages and forms answer 503 with Retry-After; once back, the same session works and the credit applies once', async () => {
    const accountPath = `/accounts/${account.accountId}`;
    const form = await admin.client.get(accountPath);
    expect(form.status).toBe(200);
    const before = await balanceOf(h, account.liveKey);
    const code = await totpCode(admin.secret, 1);
    const credit = { mode: 'live', direction: 'credit', amount: '2.5', reason: 'credit tried during the outage', code, _csrf: form.csrf as string };

    await databaseAway();
    const started = performance.now();
    for (const path of [...PAGES, accountPath]) expectOutagePage(await admin.client.get(path), `GET ${path}`);
    expectOutagePage(await admin.client.post(`${accountPath}/adjust`, credit), 'the credit');
    const slowest = Math.round(performance.now() - started);
    // The process is up and says so: the public server's liveness answers.
    expect((await h.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    console.log(`console-database-outage (${testEngine}): ${PAGES.length + 2} answers of 503 with Retry-After in ${slowest} ms`);

    await databaseBack();
    const backAt = performance.now();
    // The same session, without signing in again (PostgreSQL: the pool reconnects).
    const page = await pollUntil(
      () => admin.client.get(accountPath),
      (p) => p.status === 200,
      { timeoutMs: 5_000, intervalMs: 50, what: 'the account page with the same session' },
    );
    console.log(`console-database-outage (${testEngine}): the same session answers again ${Math.round(performance.now() - backAt)} ms after the database returned`);
    expect(page.body).toContain(admin.email);
    for (const path of PAGES) expect((await admin.client.get(path)).status, path).toBe(200);

    // Nothing of the credit remains: no money moved, no audit row, its code not used up.
    expect(await balanceOf(h, account.liveKey)).toEqual(before);
    expect(await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'balance.credit', limit: 5 })).toEqual([]);
    const retried = await admin.client.post(`${accountPath}/adjust`, { ...credit, _csrf: page.csrf as string });
    expect(retried.status, retried.body.slice(0, 300)).toBe(303);
    expect(retried.location).toBe(`${accountPath}?notice=credited`);
    const after = await balanceOf(h, account.liveKey);
    expect(parseTon(after.value) - parseTon(before.value)).toBe(2_500_000_000n);
    expect(await listAudit(h.service.db.kysely, { accountId: account.accountId, action: 'balance.credit', limit: 5 })).toHaveLength(1);
    expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  });
});
