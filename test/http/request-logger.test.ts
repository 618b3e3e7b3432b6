import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { lazyChildLogger } from '../../src/http/request-logger.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';

/** Request loggers made by pino only when a request logs (src/http/request-logger.ts). */

function sink() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

/** pino writes asynchronously to its destination: wait until the line is there. */
const flushed = () => new Promise((resolve) => setImmediate(resolve));

describe('lazyChildLogger', () => {
  test('below the level: nothing is written and no pino child is made', async () => {
    const { lines, stream } = sink();
    const parent = createLogger('warn', stream);
    const child = vi.spyOn(parent, 'child');
    const logger = lazyChildLogger(parent, { request_id: 'req_1' }, {});
    logger.info({ req: 'x' }, 'incoming request');
    logger.debug('detail');
    await flushed();
    expect(lines).toEqual([]);
    expect(child).not.toHaveBeenCalled();
    expect(logger.level).toBe('warn');
  });

  test('at the level: the line carries the bindings, redaction applies, one child serves every line', async () => {
    const { lines, stream } = sink();
    const parent = createLogger('warn', stream);
    const child = vi.spyOn(parent, 'child');
    const logger = lazyChildLogger(parent, { request_id: 'req_2' }, {});
    logger.warn({ code: 'x', authorization: 'Bearer sk_test_secret' }, 'first');
    logger.error('second %s', 'formatted');
    await flushed();
    expect(lines.map(({ msg, request_id, level }) => ({ msg, request_id, level }))).toEqual([
      { msg: 'first', request_id: 'req_2', level: 40 },
      { msg: 'second formatted', request_id: 'req_2', level: 50 },
    ]);
    expect(lines[0]).toMatchObject({ code: 'x', authorization: '[redacted]' });
    expect(child).toHaveBeenCalledTimes(1);
  });

  test('its own children keep its bindings; a level set on it is its own', async () => {
    const { lines, stream } = sink();
    const parent = createLogger('warn', stream);
    const logger = lazyChildLogger(parent, { request_id: 'req_3' }, {});
    logger.child({ part: 'inner' }).warn('nested');
    logger.level = 'debug';
    logger.debug('now enabled');
    await flushed();
    expect(lines.map(({ msg, request_id, part }) => ({ msg, request_id, part }))).toEqual([
      { msg: 'nested', request_id: 'req_3', part: 'inner' },
      { msg: 'now enabled', request_id: 'req_3', part: undefined },
    ]);
    expect(parent.level).toBe('warn');
  });

  test("a route's own log options make pino's child at once", async () => {
    const { lines, stream } = sink();
    const parent = createLogger('warn', stream);
    const logger = lazyChildLogger(parent, { request_id: 'req_4' }, { level: 'debug' });
    expect(logger.level).toBe('debug');
    logger.debug('route debug');
    await flushed();
    expect(lines.map(({ msg }) => msg)).toEqual(['route debug']);
  });
});

describe('in the service, at level warn', () => {
  let database: FreshDatabase;
  let service: RunningService;
  const { lines, stream } = sink();
  beforeAll(async () => {
    database = await freshDatabase();
    service = await startService(loadConfig({ PORT: '0', ...database.env }), createLogger('warn', stream));
  });
  afterAll(async () => {
    await service?.stop();
    await database?.dispose();
  });

  test('a request that logs writes its own request id; one that succeeds writes nothing', async () => {
    const { testKey, liveKey } = await createAccount(service.db, `logger-${Date.now()}@example.com`);
    const quiet = await service.app.inject({ method: 'GET', url: '/api/v1/balance', headers: { authorization: `Bearer ${testKey}` } });
    expect(quiet.statusCode).toBe(200);
    // No live fulfilment is configured: a live order is refused with 503, which logs a warning.
    const refused = await service.app.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { authorization: `Bearer ${liveKey}`, 'idempotency-key': 'logger-1', 'content-type': 'application/json' },
      payload: { product: 'stars', recipient: '@durov', quantity: 50 },
    });
    expect(refused.statusCode).toBe(503);
    await flushed();
    const ours = lines.filter((line) => line.request_id !== undefined);
    expect(ours.map((line) => line.request_id)).toEqual([refused.headers['request-id']]);
    expect(ours[0]).toMatchObject({ level: 40, code: 'live_unavailable' });
  });
});
