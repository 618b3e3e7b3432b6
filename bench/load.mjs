// @ts-check
// One autocannon run in its own process (so the load generator never shares the server's
// event loop). Prints autocannon's JSON result on stdout.
// node bench/load.mjs '{"url": "...", "connections": 32, "duration": 10, "method": "GET", "headers": {}, "bodies": "orders"|"tx", "keys": [...], "accounts": 100}'
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
let counter = 0;
const pick = (list) => list[counter++ % list.length];

const requests = [
  {
    method: spec.method ?? 'GET',
    setupRequest(request) {
      if (spec.bodies === 'orders') {
        request.headers = {
          ...request.headers,
          authorization: `Bearer ${pick(spec.keys)}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        };
        request.body = JSON.stringify({ product: 'stars', recipient: '@bench_user', quantity: 50 });
      } else if (spec.bodies === 'tx') {
        request.headers = { ...request.headers, 'content-type': 'application/json' };
        request.body = JSON.stringify({ account: (counter++ % spec.accounts) + 1 });
      }
      return request;
    },
  },
];

const run = autocannon({
  url: spec.url,
  connections: spec.connections ?? 32,
  ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration ?? 10 }),
  headers: spec.headers ?? {},
  ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  requests,
});
// Latencies from each 2xx response's own timing (hrtime, fractions of a millisecond), as
// autocannon's histogram counts them but unrounded: its percentiles are whole milliseconds,
// and with a baseline answering in about 1 ms, a p99 of "1" against "3" is a ratio of 3 that
// may be 1.8 against 2.1.
const latencies = [];
run.on('response', (_client, statusCode, _bytes, ms) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
});
const result = await run;
latencies.sort((a, b) => a - b);
const round = (ms) => Number(ms.toFixed(3));
const percentile = (p) => round(latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0);
process.stdout.write(
  JSON.stringify({
    rps: result.requests.average,
    p50: percentile(50),
    mean: round(latencies.reduce((sum, ms) => sum + ms, 0) / Math.max(1, latencies.length)),
    p99: percentile(99),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total,
  }),
);
