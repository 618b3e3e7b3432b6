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

const result = await autocannon({
  url: spec.url,
  connections: spec.connections ?? 32,
  ...(spec.amount ? { amount: spec.amount } : { duration: spec.duration ?? 10 }),
  headers: spec.headers ?? {},
  ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  requests,
});
process.stdout.write(JSON.stringify({
  rps: result.requests.average,
  p50: result.latency.p50,
  mean: result.latency.average,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  total: result.requests.total,
}));
