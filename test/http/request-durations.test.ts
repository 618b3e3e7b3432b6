import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { getBalance } from '../support/http.js';

/**
 * starport_http_request_duration_seconds (docs/operations.md): one series per method, route
 * pattern and status, rendered as a Prometheus histogram. It is kept by hand
 * (src/http/request-durations.ts), so its lines are checked here.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const NAME = 'starport_http_request_duration_seconds';

/** The histogram's lines for one series: bucket values by `le`, then sum and count. */
async function series(labels: string) {
  const text = (await h.inject({ method: 'GET', url: '/metrics' })).body;
  const lines = text.split('\n').filter((line) => line.startsWith(`${NAME}_`) && line.includes(labels));
  const buckets = new Map<string, number>();
  let sum: number | undefined;
  let count: number | undefined;
  for (const line of lines) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (line.startsWith(`${NAME}_bucket`) && le) buckets.set(le, value);
    else if (line.startsWith(`${NAME}_sum`)) sum = value;
    else if (line.startsWith(`${NAME}_count`)) count = value;
  }
  return { text, lines, buckets, sum, count };
}

describe('request durations in /metrics', () => {
  test('each request counts once under its route pattern, method and status, in cumulative buckets', async () => {
    const a = await h.account();
    for (let i = 0; i < 3; i++) await getBalance(h, a.testKey);
    await h.inject({ method: 'GET', url: '/api/v1/balance' }); // no key: 401
    await h.inject({ method: 'GET', url: '/api/v1/orders/ord_0000000000000000000000', headers: { authorization: `Bearer ${a.testKey}` } });

    const ok = await series('method="GET",route="/api/v1/balance",status="200"');
    expect(ok.count).toBe(3);
    expect(ok.sum).toBeGreaterThan(0);
    expect([...ok.buckets.keys()]).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '+Inf']);
    const values = [...ok.buckets.values()];
    expect(values).toEqual([...values].sort((x, y) => x - y)); // cumulative
    expect(ok.buckets.get('+Inf')).toBe(3);
    // Prometheus's own label order: le first, then the series' labels.
    expect(ok.lines[0]).toMatch(new RegExp(`^${NAME}_bucket\\{le="0.001",method="GET",route="/api/v1/balance",status="200"\\} \\d+$`));

    expect((await series('method="GET",route="/api/v1/balance",status="401"')).count).toBe(1);
    // The route pattern, never the raw URL with its id.
    expect((await series('method="GET",route="/api/v1/orders/:id",status="404"')).count).toBe(1);
    expect(ok.text).not.toContain('ord_0000000000000000000000');
  });

  test('requests no route matched are labelled unmatched, once each', async () => {
    await h.inject({ method: 'GET', url: '/no/such/route' });
    await h.inject({ method: 'POST', url: '/api/v1/nothing-here', payload: {} });
    expect((await series('method="GET",route="unmatched",status="404"')).count).toBe(1);
    expect((await series('method="POST",route="unmatched",status="404"')).count).toBe(1);
  });

  test('HEAD requests of a GET route are their own series', async () => {
    await h.inject({ method: 'HEAD', url: '/healthz' });
    await h.inject({ method: 'GET', url: '/healthz' });
    expect((await series('method="HEAD",route="/healthz",status="200"')).count).toBe(1);
    expect((await series('method="GET",route="/healthz",status="200"')).count).toBeGreaterThanOrEqual(1);
  });
});
