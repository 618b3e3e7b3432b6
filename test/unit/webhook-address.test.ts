import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { classifyAddress, parseWebhookUrl, refusalFor } from '../../src/webhooks/address-policy.js';
import { checkWebhookUrl, dnsResolver, type Resolver, sendWebhook, vetDestination } from '../../src/webhooks/sender.js';
import { retryDelay, DEFAULT_RETRY_DELAYS_MS } from '../../src/webhooks/schedule.js';
import { type DnsServer, startDnsServer } from '../support/dns-server.js';
import { startReceiver } from '../support/webhook-receiver.js';

/** The SSRF address classifier and URL rules of webhooks (src/webhooks/address-policy.ts). */

describe('classifyAddress', () => {
  test.each([
    // IPv4
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link_local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff::1', 'link_local'],
    ['fec0::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    // IPv4 inside IPv6: judged by the IPv4 address
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['::10.0.0.1', 'private'],
    ['::2', 'unspecified'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['64:ff9b::808:808', 'public'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:0808:0808::1', 'public'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  test.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '169.253.255.255', '2606:4700:4700::1111', '2a00:1450:4001::200e'])(
    '%s is public',
    (address) => {
      expect(classifyAddress(address)).toBe('public');
    },
  );

  test('a name or garbage is never public', () => {
    expect(classifyAddress('example.com')).toBe('reserved');
    expect(classifyAddress('')).toBe('reserved');
    expect(classifyAddress('1.2.3')).toBe('reserved');
  });
});

describe('refusalFor', () => {
  test('live mode refuses every non-public class, loopback included even when allowed', () => {
    for (const address of ['127.0.0.1', '::1', '10.0.0.1', '169.254.169.254', 'fd00::1', '100.64.0.1', '224.0.0.1', '0.0.0.0']) {
      expect(refusalFor(address, 'live', { allowLoopback: true }), address).toMatch(/public internet/);
    }
    expect(refusalFor('8.8.8.8', 'live', { allowLoopback: false })).toBeUndefined();
  });

  test('test mode allows loopback only when the operator enabled it, and never private ranges', () => {
    expect(refusalFor('127.0.0.1', 'test', { allowLoopback: false })).toMatch(/loopback/);
    // The refusal names the operator setting that allows it; live-mode refusals do not offer it.
    expect(refusalFor('127.0.0.1', 'test', { allowLoopback: false })).toContain('WEBHOOK_ALLOW_LOOPBACK=1');
    expect(refusalFor('127.0.0.1', 'live', { allowLoopback: false })).not.toContain('WEBHOOK_ALLOW_LOOPBACK');
    expect(refusalFor('10.0.0.1', 'test', { allowLoopback: false })).not.toContain('WEBHOOK_ALLOW_LOOPBACK');
    expect(refusalFor('127.0.0.1', 'test', { allowLoopback: true })).toBeUndefined();
    expect(refusalFor('::1', 'test', { allowLoopback: true })).toBeUndefined();
    expect(refusalFor('::ffff:127.0.0.1', 'test', { allowLoopback: true })).toBeUndefined();
    expect(refusalFor('192.168.0.1', 'test', { allowLoopback: true })).toMatch(/private/);
  });
});

describe('parseWebhookUrl', () => {
  test.each([
    [123, 'test', /non-empty string/],
    ['', 'test', /non-empty string/],
    ['not a url', 'test', /absolute URL/],
    ['ftp://example.com/x', 'test', /https/],
    ['http://example.com/x', 'live', /Live-mode webhook URLs must use https/],
    ['https://user:pw@example.com/x', 'live', /user name or password/],
    ['https://example.com/x#frag', 'live', /fragment/],
    [`https://example.com/${'a'.repeat(2100)}`, 'live', /at most 2048/],
  ] as const)('%j in %s mode is refused', (raw, mode, message) => {
    const result = parseWebhookUrl(raw, mode);
    expect('error' in result && result.error).toMatch(message);
  });

  test('http is fine in test mode, https in both', () => {
    expect('url' in parseWebhookUrl('http://example.com/hooks', 'test')).toBe(true);
    expect('url' in parseWebhookUrl('https://example.com/hooks?x=1', 'live')).toBe(true);
  });
});

describe('resolution at creation and at send time', () => {
  const resolver =
    (answers: Record<string, string[]>): Resolver =>
    async (hostname) => {
      const addresses = answers[hostname];
      if (!addresses) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };

  test('a name that resolves to a private address is refused, even when only one of its addresses is', async () => {
    const resolve = resolver({ 'inside.example': ['10.1.2.3'], 'mixed.example': ['93.184.215.14', '169.254.169.254'], 'public.example': ['93.184.215.14'] });
    await expect(checkWebhookUrl('https://inside.example/h', 'live', { allowLoopback: false }, resolve)).resolves.toEqual({
      error: expect.stringMatching(/10\.1\.2\.3 is a private address/),
    });
    await expect(checkWebhookUrl('https://mixed.example/h', 'live', { allowLoopback: false }, resolve)).resolves.toEqual({
      error: expect.stringMatching(/169\.254\.169\.254 is a link-local address/),
    });
    await expect(checkWebhookUrl('https://nowhere.example/h', 'live', { allowLoopback: false }, resolve)).resolves.toEqual({
      error: expect.stringMatching(/does not resolve/),
    });
    await expect(checkWebhookUrl('https://public.example/h', 'live', { allowLoopback: false }, resolve)).resolves.toEqual({ url: 'https://public.example/h' });
  });

  test('IP literals and localhost are judged without DNS', async () => {
    const never: Resolver = async () => {
      throw new Error('no DNS expected');
    };
    for (const url of [
      'https://127.0.0.1/h',
      'https://[::1]/h',
      'https://[::ffff:127.0.0.1]/h',
      'https://localhost/h',
      'https://api.localhost/h',
      'https://10.0.0.5:8443/h',
      'https://[fd00::5]/h',
    ]) {
      await expect(checkWebhookUrl(url, 'live', { allowLoopback: true }, never), url).resolves.toHaveProperty('error');
    }
    await expect(vetDestination(new URL('http://localhost:9/h'), 'test', { allowLoopback: true }, never)).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  test('DNS rebinding: a name that was public at creation and private at send time is refused at send time, and nothing is sent', async () => {
    let answer = '93.184.215.14';
    const resolve: Resolver = async () => [{ address: answer, family: 4 }];
    await expect(checkWebhookUrl('https://rebind.example/h', 'live', { allowLoopback: false }, resolve)).resolves.toEqual({ url: 'https://rebind.example/h' });
    answer = '127.0.0.1';
    const result = await sendWebhook({ url: 'https://rebind.example/h', mode: 'live', headers: {}, body: '{}', timeoutMs: 1000, policy: { allowLoopback: true }, resolve });
    expect(result).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
  });
});

/**
 * Webhook names are looked up with DNS queries (src/webhooks/sender.ts dnsResolver), which hold
 * no libuv thread: a client's names whose servers never answer delay no other lookup, of
 * webhooks or of anything else in the process. Against a DNS server on loopback that the test
 * controls.
 */
describe('webhook lookups', () => {
  let server: DnsServer;
  beforeAll(async () => {
    server = await startDnsServer();
    server.names.set('hooks.answers.test', ['93.184.215.14', '93.184.215.15']);
    server.names.set('inside.answers.test', ['10.0.0.7']);
    for (let i = 0; i < 10; i++) server.names.set(`never-${i}.silent.test`, 'silent');
  });
  afterAll(async () => {
    await server?.close();
  });

  test('a name is asked of the configured server (A and AAAA at once) and answers with its addresses', async () => {
    const resolve = dnsResolver([server.address]);
    await expect(resolve('hooks.answers.test')).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '93.184.215.15', family: 4 },
    ]);
    expect(server.questions).toEqual(expect.arrayContaining(['A hooks.answers.test', 'AAAA hooks.answers.test']));
    const policy = { allowLoopback: false, dnsServers: [server.address] };
    await expect(checkWebhookUrl('https://hooks.answers.test/h', 'live', policy)).resolves.toEqual({ url: 'https://hooks.answers.test/h' });
    await expect(checkWebhookUrl('https://inside.answers.test/h', 'live', policy)).resolves.toEqual({ error: expect.stringMatching(/10\.0\.0\.7 is a private address/) });
    await expect(checkWebhookUrl('https://unknown.answers.test/h', 'live', policy)).resolves.toEqual({ error: 'url cannot be used: unknown.answers.test does not resolve.' });
  });

  test('ten names whose server never answers delay neither another webhook lookup nor the system resolver; each ends when its caller stops waiting', async () => {
    const resolve = dnsResolver([server.address]);
    const gaveUp = new AbortController();
    const settled: boolean[] = [];
    const silent = Array.from({ length: 10 }, (_, i) =>
      resolve(`never-${i}.silent.test`, gaveUp.signal).then(
        () => (settled[i] = true),
        (error: unknown) => {
          settled[i] = true;
          throw error;
        },
      ),
    );
    for (const lookup of silent) lookup.catch(() => undefined);
    // Another client's name, and a system lookup (libuv's thread pool), answer meanwhile.
    await expect(resolve('hooks.answers.test')).resolves.toHaveLength(2);
    await expect(checkWebhookUrl('https://hooks.answers.test/h', 'live', { allowLoopback: false, dnsServers: [server.address] })).resolves.toEqual({
      url: 'https://hooks.answers.test/h',
    });
    await expect(dns.promises.lookup('localhost')).resolves.toHaveProperty('address');
    expect(settled.filter(Boolean)).toEqual([]);
    expect(server.questions.filter((q) => q.startsWith('A never-'))).toHaveLength(10);
    gaveUp.abort(new Error('no longer waiting'));
    for (const lookup of silent) await expect(lookup).rejects.toThrow('no longer waiting');
  });

  test('WEBHOOK_DNS_SERVERS reaches the checks through the policy', async () => {
    // The same name, asked of a server that does not know it: refused; of the test's server: resolved.
    const other = await startDnsServer();
    try {
      await expect(vetDestination(new URL('https://hooks.answers.test/h'), 'live', { allowLoopback: false, dnsServers: [other.address] })).rejects.toThrow(
        'hooks.answers.test does not resolve',
      );
      await expect(vetDestination(new URL('https://hooks.answers.test/h'), 'live', { allowLoopback: false, dnsServers: [server.address] })).resolves.toEqual({
        address: '93.184.215.14',
        family: 4,
      });
      expect(other.questions).toContain('A hooks.answers.test');
    } finally {
      await other.close();
    }
  });
});

describe('the connection goes to the vetted address', () => {
  test('a name is resolved once, checked, and connected to at exactly that address (no second lookup)', async () => {
    const receiver = await startReceiver();
    try {
      const port = new URL(receiver.url).port;
      let lookups = 0;
      const resolve: Resolver = async (hostname) => {
        lookups++;
        expect(hostname).toBe('hooks.starport-test.invalid');
        return [{ address: '127.0.0.1', family: 4 }];
      };
      // The system resolver cannot resolve *.invalid: the request arriving proves the pinned address was used.
      const result = await sendWebhook({
        url: `http://hooks.starport-test.invalid:${port}/pinned`,
        mode: 'test',
        headers: { 'webhook-id': 'msg_1' },
        body: '{"a":1}',
        timeoutMs: 2000,
        policy: { allowLoopback: true },
        resolve,
      });
      expect(result).toMatchObject({ ok: true, statusCode: 200, error: null });
      expect(lookups).toBe(1);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0]).toMatchObject({ path: '/pinned', body: '{"a":1}' });
      expect(receiver.received[0]!.headers.host).toBe(`hooks.starport-test.invalid:${port}`);
    } finally {
      await receiver.close();
    }
  });

  test('a connection failure and an oversized answer are reported, not thrown', async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    receiver.fallback = { status: 201, body: 'é'.repeat(5000) };
    const ok = await sendWebhook({ url: receiver.url, mode: 'test', headers: {}, body: '{}', timeoutMs: 2000, policy: { allowLoopback: true } });
    expect(ok).toMatchObject({ ok: true, statusCode: 201 });
    expect(ok.snippet).toBe('é'.repeat(256));
    await receiver.close();
    const refused = await sendWebhook({ url: `http://127.0.0.1:${port}/gone`, mode: 'test', headers: {}, body: '{}', timeoutMs: 2000, policy: { allowLoopback: true } });
    expect(refused).toMatchObject({ ok: false, statusCode: null, error: 'connection failed (ECONNREFUSED)' });
  });
});

describe('retry schedule', () => {
  test('the default schedule spans about 3 days over 10 attempts, with ±10 % jitter', () => {
    const total = DEFAULT_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(DEFAULT_RETRY_DELAYS_MS).toHaveLength(9);
    expect(total).toBeGreaterThanOrEqual(3 * 86_400_000);
    expect(total).toBeLessThan(3.5 * 86_400_000);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 1, () => 0)).toBe(4_500);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 1, () => 1)).toBe(5_500);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 9, () => 0.5)).toBe(86_400_000);
    expect(retryDelay(DEFAULT_RETRY_DELAYS_MS, 10)).toBeUndefined();
  });
});

describe('Retry-After', () => {
  test('lengthens the wait, never shortens it, and is capped at 24 h', () => {
    expect(retryDelay([1000], 1, () => 0.5, 5000)).toBe(5000);
    expect(retryDelay([10_000], 1, () => 0.5, 5000)).toBe(10_000);
    expect(retryDelay([1000], 1, () => 0.5, 10 * 86_400_000)).toBe(86_400_000);
    expect(retryDelay([1000], 2, () => 0.5, 5000)).toBeUndefined();
  });
});
