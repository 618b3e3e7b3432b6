import { spawn } from 'node:child_process';
import { mnemonicNew } from '@ton/crypto';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { parseTon } from '../../src/domain/money.js';
import { lastKyc, storedFragmentSession } from '../../src/live/fragment/session-store.js';
import { findPayment } from '../../src/live/live-payments.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { BIN, childEnv, cliFor, describeRun, PROJECT_ROOT, parseJsonStdout } from '../support/cli.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { FAKE_SESSION, FakeFragment } from '../support/fragment/fake-fragment.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { fundedWallet } from '../live/wallet-support.js';
import { pollUntil } from '../support/http.js';

/**
 * The live operator commands as the real `bin/starport` (dist/: `npm run build` first) beside a
 * running service on the same database: `fragment session set` (stdin or flag) picked up by the
 * service without a restart, `live check`, and `order resolve` / `order show` of a live order.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const RENEWED = 'stel_ssid=renewed-ssid; stel_dt=-180; stel_token=renewed-secret-token; stel_ton_token=renewed-ton-token';
const SECRET_PARTS = ['renewed-secret-token', 'renewed-ton-token', 'fake-token', 'fake-ton-token'];

let database: FreshDatabase;
let fake: FakeFragment;
let ton: FakeToncenter;
let service: RunningService;
let env: Record<string, string>;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  database = await freshDatabase();
  fake = await FakeFragment.start();
  fake.setRecipient('durov', { name: 'Pavel Durov' });
  ton = await FakeToncenter.start();
  const mnemonic = (await mnemonicNew()).join(' ');
  await fundedWallet(ton, mnemonic, '1000');
  env = {
    ...database.env,
    FRAGMENT_BASE_URL: fake.url,
    FRAGMENT_COOKIES: FAKE_SESSION,
    WALLET_MNEMONIC: mnemonic,
    LIVE_BREAKER_COOLDOWN_SECONDS: '1',
    // The CLI sees the funded wallet on the fake chain.
    TON_API_URL: ton.url,
  };
  // The service cannot reach a chain (port 9 refuses): its live orders keep their payment
  // request unpaid, for `order show` / `order resolve` below.
  service = await startService(loadConfig({ ...env, PORT: '0', TON_API_URL: 'http://127.0.0.1:9/api/v2' }), createLogger('silent'));
  cli = cliFor(env);
});
afterAll(async () => {
  await service?.stop();
  await fake?.close();
  await ton?.close();
  await database?.dispose();
});

/** Runs the CLI with `input` on stdin (the way an operator pipes the cookies in). */
function withStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), cwd: PROJECT_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

async function validateLive(key: string, recipient = 'durov') {
  const res = await fetch(`${service.url}/api/v1/recipients/validate`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ product: 'stars', recipient, quantity: 50 }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const noSecrets = (text: string) => {
  for (const secret of SECRET_PARTS) expect(text).not.toContain(secret);
};

describe('fragment session set', () => {
  test('bad input is refused and stores nothing', async () => {
    const missing = await withStdin(['fragment', 'session', 'set'], 'stel_ssid=a; stel_dt=-180; stel_token=renewed-secret-token');
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toMatch(/lacks the cookie\(s\) stel_ton_token/);
    noSecrets(missing.stderr + missing.stdout);
    const empty = await withStdin(['fragment', 'session', 'set'], '\n');
    expect(empty.code).toBe(1);
    expect(await storedFragmentSession(service.db.kysely)).toBeUndefined();
  });

  test('a renewed session piped in is used by the running service from its next call, without a restart', async () => {
    const { liveKey } = await createAccount(service.db, `cli-live-${Date.now()}@example.com`);
    expect((await validateLive(liveKey)).status).toBe(200);
    // Fragment logs the old session out.
    fake.setSession(RENEWED);
    const refused = await validateLive(liveKey, 'durov2');
    expect(refused.body.error.code).toBe('live_unavailable');

    const result = await withStdin(['fragment', 'session', 'set', '--json', '--actor', 'ops'], `${RENEWED}\n`);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ stored: true, cookies: ['stel_ssid', 'stel_dt', 'stel_token', 'stel_ton_token'] });
    noSecrets(result.stdout + result.stderr);
    expect((await storedFragmentSession(service.db.kysely))?.header).toBe(RENEWED);

    fake.setRecipient('durov2');
    const ok = await pollUntil(
      () => validateLive(liveKey, 'durov2'),
      (r) => r.status === 200,
      { what: 'the service to use the new session', timeoutMs: 15_000 },
    );
    expect(ok.body.recipient.display_name).toBe('durov2');
    expect(fake.calls.at(-1)?.cookie).toBe(RENEWED);

    const audit = await cli(['audit', 'list', '--json']);
    const entry = parseJsonStdout(audit).entries.find((e: { action: string }) => e.action === 'fragment.session_set');
    expect(entry).toMatchObject({ actor: 'ops', details: { cookies: ['stel_ssid', 'stel_dt', 'stel_token', 'stel_ton_token'] } });
    noSecrets(audit.stdout);
  });

  test('--cookies works too', async () => {
    const result = await cli(['fragment', 'session', 'set', '--cookies', RENEWED]);
    expect(result.code, describeRun(['fragment', 'session', 'set'], result)).toBe(0);
    expect(result.stdout).toMatch(/Fragment session stored/);
    noSecrets(result.stdout + result.stderr);
  });
});

describe('live check', () => {
  test('ready: session valid, KYC not known yet (a warning), wallet mnemonic valid, breaker closed', async () => {
    await pollUntil(
      () => service.live.breaker.read(),
      (b) => b.state === 'closed',
      { what: 'the breaker to close' },
    );
    const result = await cli(['live', 'check', '--json']);
    expect(result.code, describeRun(['live', 'check'], result)).toBe(0);
    expect(parseJsonStdout(result)).toMatchObject({
      ready: true,
      blockers: [],
      // No purchase has reached get*Link yet: Fragment has not said anything about KYC.
      kyc: { state: 'unknown' },
      warnings: [expect.stringMatching(/^KYC state unknown/)],
      fragment: { session: 'valid', source: 'database' },
      wallet: { mnemonic: 'valid', version: 'v5r1', address: expect.stringMatching(/^UQ[A-Za-z0-9_-]{46}$/), balance: '1000', min_balance: '1', seqno: 0, deployed: false },
      breaker: { state: 'closed' },
    });
    noSecrets(result.stdout + result.stderr);
    const text = await cli(['live', 'check']);
    expect(text.stdout).toMatch(/^live trading: ready$/m);
    expect(text.stdout).toMatch(/balance 1000 TON \(minimum 1\)/);
    expect(text.stdout).toMatch(/^warning: KYC state unknown/m);
  });

  test('not ready when the wallet balance is below WALLET_MIN_BALANCE_TON, or toncenter cannot tell', async () => {
    const low = await cliFor({ ...env, WALLET_MIN_BALANCE_TON: '5000' })(['live', 'check', '--json']);
    expect(low.code, describeRun(['live', 'check'], low)).toBe(2);
    expect(parseJsonStdout(low).blockers).toContain('wallet balance 1000 TON below WALLET_MIN_BALANCE_TON 5000');
    const unreachable = await cliFor({ ...env, TON_API_URL: 'http://127.0.0.1:9/api/v2' })(['live', 'check', '--json']);
    expect(unreachable.code).toBe(2);
    expect(parseJsonStdout(unreachable)).toMatchObject({ wallet: { balance: null, balance_note: expect.stringMatching(/toncenter/) } });
    noSecrets(low.stdout + unreachable.stdout + unreachable.stderr);
    expect(low.stdout + unreachable.stdout).not.toContain(env.WALLET_MNEMONIC?.split(' ').slice(0, 3).join(' '));
  });

  test('without a wallet mnemonic the balance line says why it is unknown, in words', async () => {
    const args = ['live', 'check'];
    const result = await cliFor({ ...env, WALLET_MNEMONIC: undefined })(args);
    expect(result.code, describeRun(args, result)).toBe(2);
    expect(result.stdout).toMatch(/^wallet: mnemonic not configured, \S+; balance unknown: no usable wallet mnemonic, so no wallet address to look up$/m);
    expect(result.stdout).toMatch(/^live trading: NOT ready \(.*wallet mnemonic not configured/m);
  });

  test('wallet status: address, balance, seqno, nothing in flight; the mnemonic never printed', async () => {
    const result = await cli(['wallet', 'status', '--json']);
    expect(result.code, describeRun(['wallet', 'status'], result)).toBe(0);
    expect(parseJsonStdout(result)).toMatchObject({
      wallet: { state: 'ok', version: 'v5r1', balance: '1000', seqno: 0, deployed: false, low_balance: false },
      in_flight: [],
      held: [],
    });
    const text = await cli(['wallet', 'status']);
    expect(text.stdout).toMatch(/balance 1000 TON, seqno 0/);
    // Single BIP39 words are ordinary English ("payment" is one, and the output says "payment
    // request"): look for any two neighbouring words of the mnemonic instead.
    const words = env.WALLET_MNEMONIC?.split(' ') ?? [];
    const printed = ` ${text.stdout} ${result.stdout} `.replace(/\s+/g, ' ');
    for (let i = 0; i + 1 < words.length; i++) expect(printed).not.toContain(` ${words[i]} ${words[i + 1]} `);
  });

  test('not ready (exit 2) when the session is logged out, and says why', async () => {
    fake.expireSession();
    try {
      const result = await cli(['live', 'check', '--json']);
      expect(result.code, describeRun(['live', 'check'], result)).toBe(2);
      const report = parseJsonStdout(result);
      expect(report).toMatchObject({ ready: false, fragment: { session: 'invalid' } });
      expect(report.blockers).toContain('Fragment session invalid');
      noSecrets(result.stdout + result.stderr);
    } finally {
      fake.setSession(RENEWED);
    }
  });
});

describe('live check: KYC as Fragment last answered', () => {
  test('not ready (exit 2) once a purchase met need_verify; ready again, KYC verified, after the next purchase gets through', async () => {
    await pollUntil(
      () => service.live.breaker.read(),
      (b) => b.state === 'closed',
      { what: 'the breaker to close' },
    );
    const account = await createAccount(service.db, `cli-kyc-${Date.now()}@example.com`);
    await adjustBalance(service.db, { accountId: account.accountId, mode: 'live', amount: parseTon('5'), reason: 'test funding' });
    fake.kyc = false;
    try {
      const created = await fetch(`${service.url}/api/v1/orders`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.liveKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': `kyc-${Date.now()}` },
        body: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 }),
      });
      expect(created.status).toBe(201);
      // The service's worker asks for the payment and Fragment answers need_verify.
      await pollUntil(
        () => lastKyc(service.db.kysely),
        (k) => k?.state === 'required',
        { what: 'need_verify to be recorded' },
      );
      const result = await cli(['live', 'check', '--json']);
      expect(result.code, describeRun(['live', 'check'], result)).toBe(2);
      const report = parseJsonStdout(result);
      expect(report).toMatchObject({ ready: false, kyc: { state: 'required', observed_at: expect.any(String) }, warnings: [] });
      expect(report.blockers).toContain('KYC verification required on fragment.com');
    } finally {
      fake.kyc = true;
    }
    // Verified on fragment.com: live check still says required until a purchase gets through.
    await pollUntil(
      () => lastKyc(service.db.kysely),
      (k) => k?.state === 'verified',
      { what: 'the retried purchase to record KYC verified', timeoutMs: 20_000 },
    );
    await pollUntil(
      () => service.live.breaker.read(),
      (b) => b.state === 'closed',
      { what: 'the breaker to close' },
    );
    const again = await cli(['live', 'check', '--json']);
    expect(again.code, describeRun(['live', 'check'], again)).toBe(0);
    expect(parseJsonStdout(again)).toMatchObject({ ready: true, kyc: { state: 'verified' }, warnings: [] });
  });
});

describe('order show / order resolve of a live order held with its payment request', () => {
  test('show lists the payment request and margin; resolve --delivered debits through the ledger, audited', async () => {
    await pollUntil(
      () => service.live.breaker.read(),
      (b) => b.state === 'closed',
      { what: 'the breaker to close' },
    );
    const account = await createAccount(service.db, `cli-resolve-${Date.now()}@example.com`);
    await adjustBalance(service.db, { accountId: account.accountId, mode: 'live', amount: parseTon('5'), reason: 'test funding' });
    const created = await fetch(`${service.url}/api/v1/orders`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${account.liveKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': `k-${Date.now()}` },
      body: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;
    await pollUntil(
      () => findPayment(service.db.kysely, id),
      (p) => p !== undefined,
      { what: 'the payment request' },
    );

    const show = parseJsonStdout(await cli(['order', 'show', id, '--json']));
    expect(show.order.status).toBe('processing');
    // reserved 0.25 − Fragment's 0.245 − the 0.01 fee allowance: the worst case, within the 5 % tolerance.
    expect(show.upstream).toMatchObject({
      amount: '0.245',
      quoted_amount: '0.245',
      fee_allowance: '0.01',
      margin: '-0.005',
      recipient_name: 'Pavel Durov',
      destination: expect.any(String),
    });
    // wallet status shows the same margin for the same order.
    const status = parseJsonStdout(await cli(['wallet', 'status', '--json']));
    expect(status.fee_allowance).toBe('0.01');
    expect(status.orders.find((o: { order_id: string }) => o.order_id === id)).toMatchObject({ reserved: '0.25', to_pay: '0.245', margin: '-0.005' });

    const resolved = await cli(['order', 'resolve', id, '--delivered', '--reason', 'paid by hand, confirmed on chain', '--json', '--actor', 'ops']);
    expect(resolved.code, describeRun(['order', 'resolve'], resolved)).toBe(0);
    expect(parseJsonStdout(resolved)).toMatchObject({ changed: true, order: { status: 'delivered' } });
    const verify = await cli(['ledger', 'verify', '--json']);
    expect(verify.code, verify.stdout).toBe(0);
    const audit = parseJsonStdout(await cli(['audit', 'list', '--json'])).entries.find(
      (e: { action: string; order_id: string }) => e.action === 'order.resolve' && e.order_id === id,
    );
    expect(audit).toMatchObject({ actor: 'ops', reason: 'paid by hand, confirmed on chain' });
  });
});

/**
 * With the breaker closed: a second, API-only node on the same database, and an account with
 * 5 live TON whose key orders 50 stars through either node (`order(url)`). Stop the node after.
 */
async function secondNode(label: string) {
  await pollUntil(
    () => service.live.breaker.read(),
    (b) => b.state === 'closed',
    { what: 'the breaker to close' },
  );
  const apiNode = await startService(loadConfig({ ...env, PORT: '0' }), createLogger('silent'), 'api');
  try {
    const account = await createAccount(service.db, `cli-${label}-${Date.now()}@example.com`);
    await adjustBalance(service.db, { accountId: account.accountId, mode: 'live', amount: parseTon('5'), reason: 'test funding' });
    const order = (url: string) =>
      fetch(`${url}/api/v1/orders`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.liveKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': `${label}-${Math.random()}` },
        body: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 }),
      });
    return { apiNode, account, order };
  } catch (error) {
    await apiNode.stop();
    throw error;
  }
}

describe('the circuit breaker is shared through the database', () => {
  test('paused by one node, every API node answers 503 live_unavailable with nothing reserved; the probe resumes all', async () => {
    const { apiNode, account, order } = await secondNode('breaker');
    try {
      fake.kyc = false;
      expect((await order(apiNode.url)).status).toBe(201);
      // The worker of the first node meets need_verify and pauses live fulfilment for everyone.
      await pollUntil(
        () => apiNode.live.breaker.read(),
        (b) => b.state === 'open',
        { what: 'the breaker to open' },
      );
      const refused = await order(apiNode.url);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as any).error.code).toBe('live_unavailable');
      expect((await order(service.url)).status).toBe(503);
      const rows = await service.db.kysely.selectFrom('orders').select('id').where('account_id', '=', account.accountId).execute();
      expect(rows).toHaveLength(1);
      const ready = (await (await fetch(`${apiNode.url}/readyz`)).json()) as any;
      expect(ready.live).toMatchObject({ status: 'paused', reason: 'kyc_required' });
      fake.kyc = true;
      await pollUntil(
        () => apiNode.live.breaker.read(),
        (b) => b.state === 'closed',
        { what: 'the probe to resume live fulfilment' },
      );
      expect((await order(apiNode.url)).status).toBe(201);
    } finally {
      fake.kyc = true;
      await apiNode.stop();
    }
  });
});

describe('live pause / live resume', () => {
  test('pause: every node answers 503 live_unavailable with nothing reserved, no upstream success resumes it; resume: orders flow; audited', async () => {
    const { apiNode, account, order } = await secondNode('pause');
    try {
      const reserved = async () => (await service.db.kysely.selectFrom('orders').select('id').where('account_id', '=', account.accountId).execute()).length;

      const noReason = await cli(['live', 'pause']);
      expect(noReason.code, describeRun(['live', 'pause'], noReason)).toBe(1);
      expect(noReason.stderr).toMatch(/--reason/);
      expect((await service.live.breaker.read()).operatorPause).toBeNull();

      const paused = await cli(['live', 'pause', '--reason', 'node upgrade', '--actor', 'ops', '--json']);
      expect(paused.code, describeRun(['live', 'pause'], paused)).toBe(0);
      expect(parseJsonStdout(paused)).toEqual({ paused: true, changed: true });
      expect((await cli(['live', 'pause', '--reason', 'twice'])).stdout).toMatch(/already paused by an operator; nothing changed/);
      for (const url of [service.url, apiNode.url]) {
        const refused = await order(url);
        expect(refused.status).toBe(503);
        expect(((await refused.json()) as any).error.code).toBe('live_unavailable');
      }
      expect(await reserved()).toBe(0);

      // The upstream answers and the breaker's success path runs: the operator's pause holds.
      await service.live.breaker.recordSuccess();
      expect((await order(apiNode.url)).status).toBe(503);
      const check = await cli(['live', 'check', '--json']);
      expect(check.code).toBe(2);
      expect(parseJsonStdout(check)).toMatchObject({
        blockers: expect.arrayContaining(['live fulfilment paused by an operator (node upgrade)']),
        breaker: { state: 'closed', operator_pause: { reason: 'paused_by_operator', message: 'node upgrade', by: 'ops' } },
      });
      expect((await cli(['live', 'check'])).stdout).toMatch(/^paused by operator: ops since \S+ \(node upgrade\); starport live resume ends it$/m);

      const resumed = await cli(['live', 'resume', '--actor', 'ops']);
      expect(resumed.code, describeRun(['live', 'resume'], resumed)).toBe(0);
      expect(resumed.stdout).toMatch(/^Live fulfilment resumed\.$/m);
      expect((await cli(['live', 'resume'])).stdout).toMatch(/was not paused by an operator; nothing changed/);
      expect((await order(apiNode.url)).status).toBe(201);

      const entries = parseJsonStdout(await cli(['audit', 'list', '--json'])).entries.filter((e: { action: string }) => e.action.startsWith('live.'));
      expect(entries.map((e: { action: string; actor: string; reason: string | null }) => [e.action, e.actor, e.reason])).toEqual([
        ['live.resume', 'ops', null],
        ['live.pause', 'ops', 'node upgrade'],
      ]);
    } finally {
      await apiNode.stop();
    }
  });
});
