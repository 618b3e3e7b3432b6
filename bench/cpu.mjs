// @ts-check
// Not part of the bench: `node bench/cpu.mjs` compares server CPU time per request (user+sys
// from /proc) of Starport and the baseline for each read route and for order creation. On a
// busy machine req/s is noise, CPU time per request much less so: use it while optimising.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedBench } from './seed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REQUESTS = Number(process.env.REQUESTS ?? 20000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-cpu-'));
const env = { PORT: '0', DATA_DIR: path.join(dataDir, 'service'), RATE_LIMIT_RPS: '0', LOG_LEVEL: 'warn', TEST_FULFILMENT_DELAY_MS: '0' };

function start(args, extra) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...extra }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
  });
}
const cpuMs = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (100/s)
};
function perRequest(server, spec) {
  execFileSync(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify({ connections: 16, duration: 1, ...spec })]);
  const before = cpuMs(server.child.pid);
  const out = JSON.parse(
    execFileSync(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify({ connections: 16, amount: REQUESTS, ...spec })], { encoding: 'utf8' }),
  );
  return ((cpuMs(server.child.pid) - before) * 1000) / out.total; // µs per request
}
const service = await start(['bin/starport', 'serve'], env);
const baseline = await start(['bench/baseline-server.mjs', path.join(dataDir, 'baseline'), '100'], {});
const seeded = await seedBench({ dataDir: env.DATA_DIR, accounts: 100 });
const auth = { authorization: `Bearer ${seeded.keys[0]}` };
/** @type {Array<[string, Record<string, unknown>, Record<string, unknown>]>} */
const rows = [
  ['GET /balance', { url: `${baseline.url}/constant` }, { url: `${service.url}/api/v1/balance`, headers: auth }],
  ['GET /orders/{id}', { url: `${baseline.url}/constant` }, { url: `${service.url}/api/v1/orders/${seeded.orderId}`, headers: auth }],
  ['GET /quote', { url: `${baseline.url}/constant` }, { url: `${service.url}/api/v1/quote?product=stars&quantity=100`, headers: auth }],
  [
    'POST /orders',
    { url: `${baseline.url}/tx`, method: 'POST', bodies: 'tx', accounts: 100 },
    { url: `${service.url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: seeded.keys },
  ],
];
for (const [name, base, svc] of rows) {
  const b = perRequest(baseline, base);
  const s = perRequest(service, svc);
  console.log(`${name.padEnd(18)} baseline ${b.toFixed(0).padStart(5)} µs/req  starport ${s.toFixed(0).padStart(5)} µs/req  ratio ${(b / s).toFixed(2)}`);
}
await seeded.close();
service.child.kill('SIGTERM');
baseline.child.kill('SIGTERM');
fs.rmSync(dataDir, { recursive: true, force: true });
