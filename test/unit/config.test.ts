import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PACKAGE_ROOT } from '../../src/config.js';
import { CONNECT_TIMEOUT_DEFAULTS_S } from '../../src/db/open.js';
import { describePostgresUrl } from '../../src/db/reach.js';

describe('loadConfig defaults', () => {
  const config = loadConfig({});

  it('listens on 127.0.0.1:3000', () => {
    expect(config.port).toBe(3000);
    expect(config.host).toBe('127.0.0.1');
  });

  it('has the contract defaults', () => {
    expect(config.quoteTtlSeconds).toBe(60);
    expect(config.testFulfilmentDelayMs).toBe(2000);
    expect(config.testSlowDelayMs).toBe(30_000);
    expect(config.publicUrl).toBeUndefined();
    expect(config.logLevel).toBe('info');
  });

  it("bounds a statement's wait on PostgreSQL to 15 s", () => {
    expect(config.databaseQueryTimeoutMs).toBe(15_000);
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '2000' })).toMatchObject({ databaseQueryTimeoutMs: 2000 });
  });

  it('keeps data in the package folder', () => {
    expect(config.dataDir).toBe(path.join(PACKAGE_ROOT, 'data'));
  });

  it('has the default prices and rate as exact decimals', () => {
    expect(config.tonUsdRate).toEqual({ units: 30n, scale: 1 });
    expect(config.prices.starUsd).toEqual({ units: 15n, scale: 3 });
    expect(config.prices.premiumUsd[3]).toEqual({ units: 1199n, scale: 2 });
    expect(config.prices.premiumUsd[6]).toEqual({ units: 1599n, scale: 2 });
    expect(config.prices.premiumUsd[12]).toEqual({ units: 2899n, scale: 2 });
    expect(config.prices.markupPercent).toEqual({ units: 0n, scale: 0 });
  });

  it('treats empty strings as unset', () => {
    const c = loadConfig({ PORT: '', HOST: '', PUBLIC_URL: '', QUOTE_TTL_SECONDS: '' });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.publicUrl).toBeUndefined();
    expect(c.quoteTtlSeconds).toBe(60);
  });
});

describe('loadConfig overrides', () => {
  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATA_DIR: '/tmp/starport-data',
      PUBLIC_URL: 'https://api.example.com',
      LOG_LEVEL: 'debug',
      PRICE_STAR_USD: '0.02',
      PRICE_PREMIUM_3_USD: '12',
      PRICE_PREMIUM_6_USD: '16.5',
      PRICE_PREMIUM_12_USD: '30',
      PRICE_MARKUP_PERCENT: '10',
      TON_USD_RATE: '5.25',
      QUOTE_TTL_SECONDS: '120',
      TEST_FULFILMENT_DELAY_MS: '0',
      TEST_SLOW_DELAY_MS: '1000',
    });
    expect(c.port).toBe(8080);
    expect(c.host).toBe('0.0.0.0');
    expect(c.dataDir).toBe('/tmp/starport-data');
    expect(c.publicUrl).toBe('https://api.example.com');
    expect(c.logLevel).toBe('debug');
    expect(c.prices.starUsd).toEqual({ units: 2n, scale: 2 });
    expect(c.prices.premiumUsd[3]).toEqual({ units: 12n, scale: 0 });
    expect(c.prices.premiumUsd[6]).toEqual({ units: 165n, scale: 1 });
    expect(c.prices.premiumUsd[12]).toEqual({ units: 30n, scale: 0 });
    expect(c.prices.markupPercent).toEqual({ units: 10n, scale: 0 });
    expect(c.tonUsdRate).toEqual({ units: 525n, scale: 2 });
    expect(c.quoteTtlSeconds).toBe(120);
    expect(c.testFulfilmentDelayMs).toBe(0);
    expect(c.testSlowDelayMs).toBe(1000);
  });

  it('resolves a relative DATA_DIR to an absolute path', () => {
    expect(path.isAbsolute(loadConfig({ DATA_DIR: 'rel/data' }).dataDir)).toBe(true);
  });
});

describe('PUBLIC_URL', () => {
  it.each([
    ['https://api.example.com/', 'https://api.example.com'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['http://localhost:8080/', 'http://localhost:8080'],
    ['HTTPS://API.Example.COM', 'https://api.example.com'],
    ['https://api.example.com:443', 'https://api.example.com'],
  ])('normalises %s to the origin %s', (raw, origin) => {
    expect(loadConfig({ PUBLIC_URL: raw }).publicUrl).toBe(origin);
  });

  it.each(['https://api.example.com/v1', 'https://api.example.com/api/v1/', 'not-a-url', 'ftp://example.com', '/relative'])('rejects %s', (raw) => {
    expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(ConfigError);
  });
});

describe('loadConfig rejects bad values', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['TON_USD_RATE', '0'],
    ['TON_USD_RATE', '0.000'],
    ['TON_USD_RATE', '-1'],
    ['TON_USD_RATE', 'abc'],
    ['TON_USD_RATE', '3,0'],
    ['TON_USD_RATE', ''],
    ['PRICE_STAR_USD', '-0.015'],
    ['PRICE_STAR_USD', '1e-2'],
    ['PRICE_MARKUP_PERCENT', '-5'],
    ['PRICE_PREMIUM_3_USD', 'free'],
    ['QUOTE_TTL_SECONDS', '0'],
    ['QUOTE_TTL_SECONDS', 'sixty'],
    ['TEST_FULFILMENT_DELAY_MS', '-1'],
    ['TEST_SLOW_DELAY_MS', '1.5'],
    ['DATABASE_QUERY_TIMEOUT_MS', '5s'],
    ['DATABASE_QUERY_TIMEOUT_MS', '99'],
    ['DATABASE_QUERY_TIMEOUT_MS', '-1'],
  ])('%s=%j → ConfigError', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });

  it('names the variable in the message', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(/PORT/);
    expect(() => loadConfig({ TON_USD_RATE: '0' })).toThrow(/TON_USD_RATE/);
  });
});

describe('start-up and shutdown bounds', () => {
  it('wait 30 s for the database in serve, 5 s in the CLI, and stop within 10 s by default', () => {
    const config = loadConfig({});
    expect(config.databaseConnectTimeoutS).toBeUndefined();
    expect(CONNECT_TIMEOUT_DEFAULTS_S).toEqual({ serve: 30, cli: 5 });
    expect(config.shutdownTimeoutS).toBe(10);
  });

  it('read DATABASE_CONNECT_TIMEOUT_S and SHUTDOWN_TIMEOUT_S in whole seconds from 1 to 3600', () => {
    expect(loadConfig({ DATABASE_CONNECT_TIMEOUT_S: '2', SHUTDOWN_TIMEOUT_S: '3600' })).toMatchObject({ databaseConnectTimeoutS: 2, shutdownTimeoutS: 3600 });
    expect(loadConfig({ DATABASE_CONNECT_TIMEOUT_S: '', SHUTDOWN_TIMEOUT_S: '' })).toMatchObject({ databaseConnectTimeoutS: undefined, shutdownTimeoutS: 10 });
    for (const value of ['0', '-1', '1.5', 'soon', '3601']) {
      expect(() => loadConfig({ DATABASE_CONNECT_TIMEOUT_S: value })).toThrow(/DATABASE_CONNECT_TIMEOUT_S must be an integer from 1 to 3600/);
      expect(() => loadConfig({ SHUTDOWN_TIMEOUT_S: value })).toThrow(/SHUTDOWN_TIMEOUT_S must be an integer from 1 to 3600/);
    }
  });

  it('name the database without its credentials or query', () => {
    expect(describePostgresUrl('postgres://app:s3cret@db.internal:6432/starport?sslmode=require&options=-c%20x')).toBe('postgres://db.internal:6432/starport');
    expect(describePostgresUrl('postgresql://app@db.internal/starport')).toBe('postgres://db.internal:5432/starport');
    expect(describePostgresUrl('postgres://app:s3cret@localhost/starport?host=/var/run/postgresql')).toBe('postgres:///var/run/postgresql:5432/starport');
    expect(describePostgresUrl('postgres://app:s3cret@[::1')).not.toContain('s3cret');
  });
});

describe('HTTP time limits and connection cap', () => {
  it('defaults: headers 10 s, request 30 s, keep-alive 5 s, 10000 connections', () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 10_000 });
  });

  it('reads the variables', () => {
    const c = loadConfig({ HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '4000', KEEP_ALIVE_TIMEOUT_MS: '65000', MAX_CONNECTIONS: '500' });
    expect(c.http).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 65_000, maxConnections: 500 });
  });

  it.each([
    ['HEADERS_TIMEOUT_MS', '0'],
    ['HEADERS_TIMEOUT_MS', '99'],
    ['REQUEST_TIMEOUT_MS', '1.5'],
    ['KEEP_ALIVE_TIMEOUT_MS', '-1'],
    ['MAX_CONNECTIONS', '0'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('refuses a headers limit above the whole request limit (Node would refuse to start)', () => {
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '20000', REQUEST_TIMEOUT_MS: '10000' })).toThrow(/HEADERS_TIMEOUT_MS .* must not exceed REQUEST_TIMEOUT_MS/);
  });
});
