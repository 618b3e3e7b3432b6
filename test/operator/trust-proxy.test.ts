import { Writable } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig, trustProxy } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { publicOrigin, type RunningService, startService } from '../../src/service.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';

/**
 * TRUST_PROXY: behind a reverse proxy, the request log names the client (X-Forwarded-For) and
 * the host and scheme it used (X-Forwarded-Host / -Proto), but only for proxies we trust.
 */
describe('TRUST_PROXY parsing', () => {
  test.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['0', false],
    ['true', true],
    ['1', true],
    ['127.0.0.1', ['127.0.0.1']],
    ['loopback, 10.0.0.0/8,fd00::/8', ['loopback', '10.0.0.0/8', 'fd00::/8']],
  ])('%j → %j', (raw, expected) => {
    expect(trustProxy(raw)).toEqual(expected);
    expect(loadConfig(raw === undefined ? {} : { TRUST_PROXY: raw }).trustProxy).toEqual(expected);
  });

  test.each(['yes please', '2', '10.0.0.0/33', 'proxy.example.com', '127.0.0.1/8/8'])('%j is a ConfigError naming TRUST_PROXY', (raw) => {
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(/TRUST_PROXY/);
  });
});

describe('the status_url origin', () => {
  const bound = 'http://127.0.0.1:3000';
  const forwarded = { protocol: 'https', host: 'api.example.com' };
  test('PUBLIC_URL wins; without it, the bound address, unless a trusted proxy tells the client origin', () => {
    expect(publicOrigin({ publicUrl: 'https://pay.example.com', trustProxy: true }, bound, forwarded)).toBe('https://pay.example.com');
    expect(publicOrigin({ publicUrl: undefined, trustProxy: false }, bound, forwarded)).toBe(bound);
    expect(publicOrigin({ publicUrl: undefined, trustProxy: ['127.0.0.1'] }, bound, forwarded)).toBe('https://api.example.com');
    expect(publicOrigin({ publicUrl: undefined, trustProxy: true }, bound)).toBe(bound);
  });
});

describe('request logs behind a proxy', () => {
  let fresh: FreshDatabase | undefined;
  let service: RunningService | undefined;

  afterEach(async () => {
    await service?.stop();
    await fresh?.dispose();
    service = undefined;
    fresh = undefined;
  });

  async function logsOf(env: Record<string, string>): Promise<Record<string, any>[]> {
    fresh = await freshDatabase();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    service = await startService(loadConfig({ ...fresh.env, PORT: '0', ...env }), createLogger('info', sink));
    const response = await fetch(`${service.url}/api/v1/balance`, {
      headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' },
    });
    expect(response.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.req);
  }

  test('with TRUST_PROXY naming the proxy, the log shows the client address and the forwarded host', async () => {
    const [incoming] = await logsOf({ TRUST_PROXY: '127.0.0.1' });
    expect(incoming?.req).toMatchObject({ remoteAddress: '203.0.113.7', host: 'api.example.com' });
  });

  test('without TRUST_PROXY, forwarded headers are ignored: a client cannot spoof its address', async () => {
    const [incoming] = await logsOf({});
    expect(incoming?.req.remoteAddress).toBe('127.0.0.1');
    expect(incoming?.req.host).not.toBe('api.example.com');
  });

  test('a proxy that is not in the list is not trusted either', async () => {
    const [incoming] = await logsOf({ TRUST_PROXY: '10.1.2.3' });
    expect(incoming?.req.remoteAddress).toBe('127.0.0.1');
  });
});
