import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';

/** examples/first-order.mjs runs end to end against a real service. */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let h: Harness;
let account: TestAccount;

beforeAll(async () => {
  h = await startHarness();
  account = await h.account({ test: '1' });
});
afterAll(async () => {
  await h.close();
});

const example = (args: string[] = [], key = account.testKey) =>
  run(process.execPath, ['examples/first-order.mjs', ...args], {
    cwd: ROOT,
    timeout: 60_000,
    env: { ...process.env, STARPORT_API_KEY: key, STARPORT_BASE_URL: `${h.url}/api/v1` },
  });

test('buys 50 test Stars and waits for delivery', async () => {
  const { stdout } = await example();
  expect(stdout).toContain('Test balance: 1 TON available');
  expect(stdout).toContain('50 Stars cost 0.25 TON');
  expect(stdout).toMatch(/Created ord_\w+: fulfillment_pending, 0\.25 TON reserved/);
  expect(stdout).toMatch(/Order ord_\w+ is delivered/);
  expect(stdout).toContain('Test balance now: 0.75 TON available, 0 TON reserved');
});

test('reports a failed order with a non-zero exit', async () => {
  const error = await example(['@test_failed']).catch((e: { code: number; stdout: string }) => e);
  expect(error).toMatchObject({ code: 1 });
  expect((error as { stdout: string }).stdout).toMatch(/is failed \(upstream_error\)/);
});

test('refuses a live key', async () => {
  const error = await example([], account.liveKey).catch((e: { code: number; stderr: string }) => e);
  expect(error).toMatchObject({ code: 2 });
});
