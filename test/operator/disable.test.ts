import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { allowSlowProcesses, type Cli, ok, operatorCli, seedAccount } from './helpers.js';

allowSlowProcesses();
/**
 * A running service (in this process) and the operator's CLI (a separate process) on one
 * database: what the operator does applies to the API's very next request, with no cache to
 * wait for and no restart.
 */
let fresh: FreshDatabase;
let service: RunningService;
let cli: Cli;

beforeAll(async () => {
  fresh = await freshDatabase();
  cli = operatorCli(fresh);
  await ok(cli, ['migrate', '--json']);
  service = await startService(loadConfig({ ...fresh.env, PORT: '0', TEST_FULFILMENT_DELAY_MS: '100' }), createLogger('silent'));
});

afterAll(async () => {
  await service?.stop();
  await fresh?.dispose();
});

async function get(key: string, path = '/api/v1/balance') {
  const response = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
}

async function postOrder(key: string) {
  const response = await fetch(`${service.url}/api/v1/orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `k-${Math.random()}` },
    body: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('a disabled account', () => {
  test('its keys are refused with 401 account_disabled at the very next request, and work again once enabled', async () => {
    const account = await seedAccount(service.db, { test: '10' });
    expect((await get(account.test_key)).status).toBe(200);
    expect((await get(account.live_key)).status).toBe(200);

    await ok(cli, ['account', 'disable', account.account_id, '--reason', 'abuse report', '--json']);
    for (const key of [account.test_key, account.live_key]) {
      const refused = await get(key);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ ok: false, error: { code: 'account_disabled' } });
    }
    const order = await postOrder(account.test_key);
    expect(order.status).toBe(401);
    expect(order.body.error.code).toBe('account_disabled');

    await ok(cli, ['account', 'enable', account.account_id, '--reason', 'resolved', '--json']);
    const back = await get(account.test_key);
    expect(back.status).toBe(200);
    expect(back.body.balance.value).toBe('10');
  });

  test('orders created before the account was disabled are still fulfilled (their amount is reserved)', async () => {
    const account = await seedAccount(service.db, { test: '1' });
    const created = await postOrder(account.test_key);
    expect(created.status).toBe(201);
    await ok(cli, ['account', 'disable', account.account_id, '--reason', 'closing', '--json']);
    const deadline = Date.now() + 10_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await ok(cli, ['order', 'show', created.body.id, '--json'])).order.status;
      if (status === 'delivered') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe('delivered');
    const shown = await ok(cli, ['account', 'show', account.account_id, '--json']);
    expect(shown.account.balances.test).toEqual({ value: '0.75', reserved: '0', currency: 'TON' });
  });

  test("a revoked key is refused with 401 api_key_revoked at the very next request; the other mode's key still works", async () => {
    const account = await seedAccount(service.db);
    expect((await get(account.live_key)).status).toBe(200);
    await ok(cli, ['key', 'revoke', '--account', account.account_id, '--mode', 'live', '--reason', 'leaked', '--json']);
    const refused = await get(account.live_key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('api_key_revoked');
    expect((await get(account.test_key)).status).toBe(200);
  });
});
