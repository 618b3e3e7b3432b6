// @ts-check
// Not part of the bench: `node bench/profile.mjs <scenario>` runs `serve` under --cpu-prof with
// one load scenario and prints where the CPU went (self time by function and by package).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedBench } from './seed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scenario = process.argv[2] ?? 'balance';
const seconds = Number(process.argv[3] ?? 8);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-prof-'));
const profDir = path.join(dataDir, 'prof');
const env = { ...process.env, PORT: '0', DATA_DIR: path.join(dataDir, 'service'), RATE_LIMIT_RPS: '0', LOG_LEVEL: 'warn', TEST_FULFILMENT_DELAY_MS: '0' };
// tsc's output rather than bin/starport's bundle: each function keeps its package's file path.
const serveUnbundled = "const { main } = await import('./dist/cli/main.js'); process.exitCode = await main(['serve']);";
const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--input-type=module', '-e', serveUnbundled], {
  cwd: root,
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve) => {
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]);
  });
});
const seeded = await seedBench({ dataDir: env.DATA_DIR, databaseUrl: process.env.DATABASE_URL, accounts: 100 });
const auth = { authorization: `Bearer ${seeded.keys[0]}` };
const specs = {
  balance: { url: `${url}/api/v1/balance`, headers: auth },
  order: { url: `${url}/api/v1/orders/${seeded.orderId}`, headers: auth },
  quote: { url: `${url}/api/v1/quote?product=stars&quantity=100`, headers: auth },
  create: { url: `${url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: seeded.keys },
};
const out = execFileSync(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify({ connections: 32, duration: seconds, ...specs[scenario] })], {
  encoding: 'utf8',
});
console.log(out);
await seeded.close();
child.kill('SIGINT');
await new Promise((r) => child.once('exit', r));
const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (dt[i] ?? 0));
const byFn = new Map();
const byPkg = new Map();
let total = 0;
for (const [id, t] of self) {
  const { callFrame: f } = byId.get(id);
  total += t;
  const where = f.url.replace(/^file:\/\//, '').replace(root, '');
  const key = `${f.functionName || '(anon)'} ${where}:${f.lineNumber}`;
  byFn.set(key, (byFn.get(key) ?? 0) + t);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ?? (where.startsWith('/dist') ? 'starport' : where.startsWith('node:') ? 'node-core' : where || f.functionName);
  byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + t);
}
// Inclusive time of Starport's own functions (each counted once per stack).
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map();
for (const [id, t] of self) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur).callFrame;
    if (!f.url.includes('/dist/') && !f.url.includes('/fastify/lib/')) continue;
    const key = `${f.functionName || '(anon)'} ${f.url.replace(/^file:\/\//, '').replace(root, '')}:${f.lineNumber}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}
const top = (m, n) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
console.log(`\ninclusive (Starport and Fastify):\n${top(inclusive, 40)}`);
console.log(`\nby package:\n${top(byPkg, 15)}\n\nby function:\n${top(byFn, 35)}`);
fs.rmSync(dataDir, { recursive: true, force: true });
