import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DEFAULT_RETRY_DELAYS_MS } from '../../src/webhooks/schedule.js';

describe('WEBHOOK_* configuration', () => {
  test("defaults: 10 s timeout, no loopback, the ~3-day schedule, disable after 3 days, 24 h rotation grace, the system's DNS servers", () => {
    expect(loadConfig({}).webhooks).toEqual({
      timeoutMs: 10_000,
      allowLoopback: false,
      retryDelaysMs: DEFAULT_RETRY_DELAYS_MS,
      disableAfterMs: 259_200_000,
      rotationGraceMs: 86_400_000,
      dnsServers: [],
    });
  });

  test('values are read and validated', () => {
    const config = loadConfig({
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_ALLOW_LOOPBACK: '1',
      WEBHOOK_RETRY_DELAYS_MS: '10, 20,30',
      WEBHOOK_DISABLE_AFTER_MS: '0',
      WEBHOOK_ROTATION_GRACE_MS: '0',
      WEBHOOK_DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,2606:4700::1111,[::1]:53',
    });
    expect(config.webhooks).toEqual({
      timeoutMs: 500,
      allowLoopback: true,
      retryDelaysMs: [10, 20, 30],
      disableAfterMs: 0,
      rotationGraceMs: 0,
      dnsServers: ['1.1.1.1', '127.0.0.1:5353', '2606:4700::1111', '[::1]:53'],
    });
  });

  test.each([
    ['WEBHOOK_TIMEOUT_MS', '50', /WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000/],
    ['WEBHOOK_TIMEOUT_MS', '10s', /WEBHOOK_TIMEOUT_MS/],
    ['WEBHOOK_ALLOW_LOOPBACK', 'yes', /WEBHOOK_ALLOW_LOOPBACK must be 1 or 0/],
    ['WEBHOOK_RETRY_DELAYS_MS', '5s,10s', /WEBHOOK_RETRY_DELAYS_MS must be/],
    ['WEBHOOK_RETRY_DELAYS_MS', '1,,2', /WEBHOOK_RETRY_DELAYS_MS must be/],
    ['WEBHOOK_DISABLE_AFTER_MS', '-1', /WEBHOOK_DISABLE_AFTER_MS/],
    ['WEBHOOK_DNS_SERVERS', 'dns.google', /WEBHOOK_DNS_SERVERS must be up to 8 comma-separated IP addresses/],
    ['WEBHOOK_DNS_SERVERS', '1.1.1.1:99999', /WEBHOOK_DNS_SERVERS/],
    ['WEBHOOK_DNS_SERVERS', '1.1.1.1,,8.8.8.8', /WEBHOOK_DNS_SERVERS/],
    ['WEBHOOK_DNS_SERVERS', '[1.1.1.1]:53', /WEBHOOK_DNS_SERVERS/],
  ])('%s=%s is refused', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
