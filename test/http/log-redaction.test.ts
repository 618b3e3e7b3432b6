import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { createLogger, redactUrl } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';

/**
 * Regression (found by the reliability suite's log search): an API key a client put in the
 * URL by mistake (`?api_key=sk_test_…`, or in the path) was written to the request log in
 * clear. Request URLs are now logged with keys and secret-sounding query values redacted.
 */
let database: FreshDatabase;
let service: RunningService;
const lines: string[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  service = await startService(loadConfig({ PORT: '0', ...database.env }), createLogger('info', sink));
});
afterAll(async () => {
  await service?.stop();
  await database?.dispose();
});

test('a key in the query string or the path never reaches the request log', async () => {
  const { testKey } = await createAccount(service.db, `redact-${Date.now()}@example.com`);
  const urls = [`/api/v1/balance?api_key=${testKey}`, `/api/v1/balance?x=1&token=abc123secret&quantity=50`, `/api/v1/orders/${testKey}`, `/api/v1/quote?k=${testKey}`];
  for (const url of urls) await service.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${testKey}` } });
  const log = lines.join('');
  expect(log).toContain('/api/v1/balance?api_key=[redacted]');
  expect(log).toContain('quantity=50');
  expect(log).not.toContain(testKey);
  expect(log).not.toContain(testKey.slice(8));
  expect(log).not.toContain('abc123secret');
});

test('redactUrl', () => {
  expect(redactUrl('/api/v1/quote?product=stars&quantity=50')).toBe('/api/v1/quote?product=stars&quantity=50');
  expect(redactUrl('/x?Api%5FKey=1&password=2&session_id=3&ok=4')).toBe('/x?Api%5FKey=[redacted]&password=[redacted]&session_id=[redacted]&ok=4');
  expect(redactUrl('/api/v1/orders/sk_live_abcDEF123')).toBe('/api/v1/orders/sk_live_[redacted]');
  expect(redactUrl('/x?%zz=1')).toBe('/x?%zz=1');
});
