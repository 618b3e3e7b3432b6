// @ts-check
// `npm run bench [-- --smoke]`: Starport against baselines measured in the same run on the
// same machine, printed as ratios (absolute numbers on a shared machine are noise). Runs on
// SQLite, or on PostgreSQL when DATABASE_URL is set. Results: bench/results/latest.json.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { seedBench } from './seed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const smoke = process.argv.includes('--smoke');
const databaseUrl = process.env.DATABASE_URL;
const engine = databaseUrl ? 'postgres' : 'sqlite';
const RUNS = smoke ? 1 : 5;
const DURATION = smoke ? 1 : 3;
const WARMUP = smoke ? 0.5 : 2;
const CONNECTIONS = 32;
const ACCOUNTS = 100;
/**
 * PostgreSQL connections per pool, the same number for both sides (docs/performance.md "How it measures": the same
 * settings), whatever DATABASE_POOL_SIZE the environment has. Starport's process keeps two
 * pools (docs/performance.md, "How it measures", on what each side keeps busy).
 */
const POOL_SIZE = 10;
const PIPELINE_SECONDS = smoke ? 3 : 30;
const BIG_ORDERS = smoke ? 20_000 : 1_000_000;
const FEW_ORDERS = 1_000;
const results = [];

function startProcess(args, env) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve({ child, url: match[1] });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening`)));
  });
}

function load(spec) {
  const out = execFileSync(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify({ connections: CONNECTIONS, ...spec })], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  return JSON.parse(out);
}

function record(name, unit, baseline, value, target, better = 'higher') {
  const ratio = baseline === null ? null : Number((value / baseline).toFixed(3));
  const pass = ratio === null ? null : better === 'higher' ? ratio >= target : ratio <= target;
  results.push({ name, unit, baseline, value, ratio, target, pass });
}

/**
 * Both warmed up, then RUNS pairs of runs, one of each side after the other: the machine's
 * drift during a figure (other tenants, the disk's sync rate) then falls on both sides alike,
 * instead of on whichever side ran second. Returns the pairs.
 */
function alternate(specA, specB) {
  load({ ...specA, duration: WARMUP });
  load({ ...specB, duration: WARMUP });
  const pairs = [];
  for (let i = 0; i < RUNS; i++) pairs.push([load({ ...specA, duration: DURATION }), load({ ...specB, duration: DURATION })]);
  return pairs;
}

/**
 * The pair whose ratio of `figure` (B's over A's) is the median. Each ratio is taken within a
 * pair, measured seconds apart: on a guest whose speed moves by half within a minute, the
 * medians of each side taken apart could come from different phases of the machine.
 */
function medianPair(pairs, figure) {
  const sorted = [...pairs].sort(([a1, b1], [a2, b2]) => b1[figure] / a1[figure] - b2[figure] / a2[figure]);
  return sorted[Math.floor(sorted.length / 2)];
}

function compare(name, baselineSpec, serviceSpec, target) {
  const pairs = alternate(baselineSpec, serviceSpec);
  const [baseline, service] = medianPair(pairs, 'rps');
  if (pairs.some(([, run]) => run.non2xx > 0 || run.errors > 0)) console.warn(`${name}: some runs had non-2xx answers or errors`);
  record(`${name} req/s`, 'req/s', baseline.rps, service.rps, target);
  const [baselineTail, serviceTail] = medianPair(pairs, 'p99');
  record(`${name} p99 latency`, 'ms', baselineTail.p99, serviceTail.p99, 2, 'lower');
  return service;
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

async function queueDepth(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^starport_queue_depth (\d+)/m.exec(text)?.[1] ?? 0);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-bench-'));
const serviceEnv = {
  PORT: '0',
  DATA_DIR: path.join(dataDir, 'service'),
  RATE_LIMIT_RPS: '0',
  LOG_LEVEL: 'warn',
  TEST_FULFILMENT_DELAY_MS: '0',
  DATABASE_POOL_SIZE: String(POOL_SIZE),
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
};
/**
 * Reads do not slow down with the table size (no scans): two fresh services, one with
 * FEW_ORDERS orders and one with BIG_ORDERS more, measured in alternating runs like every other
 * figure. (Measuring one service before and after the bulk load put the two sides in different
 * moments of a noisy machine, and of the process's own warm-up: the sides moved by 30 % either
 * way between runs of the same code.)
 */
async function measureTableSize() {
  const twins = [];
  try {
    const few = await startTwin('few', twins);
    const big = await startTwin('big', twins);
    await few.seeded.addOrders(FEW_ORDERS);
    await big.seeded.addOrders(FEW_ORDERS + BIG_ORDERS);
    const read = (twin) => ({ url: `${twin.service.url}/api/v1/orders/${twin.seeded.orderId}`, headers: { authorization: `Bearer ${twin.seeded.keys[0]}` } });
    const pairs = alternate(read(few), read(big));
    const [small, large] = medianPair(pairs, 'mean');
    record(`GET /orders/{id} mean latency, ${BIG_ORDERS} orders vs ${FEW_ORDERS}`, 'ms', small.mean, large.mean, 1.1, 'lower');
    const [smallRate, largeRate] = medianPair(pairs, 'rps');
    record(`GET /orders/{id} req/s, ${BIG_ORDERS} orders vs ${FEW_ORDERS}`, 'req/s', smallRate.rps, largeRate.rps, 0.9);
  } finally {
    await Promise.all(twins.map((twin) => twin.stop()));
  }
}

/**
 * A fresh service of its own (its own data directory, or its own PostgreSQL database), added
 * to `started` as soon as it runs so that a failure further on still stops it.
 */
async function startTwin(label, started) {
  const twinDatabaseUrl = databaseUrl ? await createDatabase(label) : undefined;
  const env = { ...serviceEnv, DATA_DIR: path.join(dataDir, label), ...(twinDatabaseUrl ? { DATABASE_URL: twinDatabaseUrl } : {}) };
  const twin = { service: await startProcess(['bin/starport', 'serve'], env), seeded: undefined };
  twin.stop = async () => {
    await twin.seeded?.close();
    const { child } = twin.service;
    const exited = child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined;
    child.kill('SIGTERM');
    await exited;
    if (twinDatabaseUrl) await dropDatabase(label);
  };
  started.push(twin);
  twin.seeded = await seedBench({ dataDir: env.DATA_DIR, databaseUrl: twinDatabaseUrl, accounts: 1 });
  return twin;
}

/** `<DATABASE_URL's database>_<suffix>`, created afresh next to it (the bench's role may create databases). */
async function createDatabase(suffix) {
  const url = new URL(databaseUrl);
  const name = `${url.pathname.slice(1)}_${suffix}`;
  await adminQuery(`drop database if exists "${name}"`);
  await adminQuery(`create database "${name}"`);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(suffix) {
  await adminQuery(`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}_${suffix}"`);
}

async function adminQuery(text) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

const service = await startProcess(['bin/starport', 'serve'], serviceEnv);
const baseline = await startProcess(['bench/baseline-server.mjs', databaseUrl ?? path.join(dataDir, 'baseline'), String(ACCOUNTS), String(POOL_SIZE)], {});
try {
  const seeded = await seedBench({ dataDir: serviceEnv.DATA_DIR, databaseUrl, accounts: ACCOUNTS });
  const auth = { authorization: `Bearer ${seeded.keys[0]}` };
  const constant = { url: `${baseline.url}/constant` };
  const readTarget = engine === 'sqlite' ? 0.5 : 0.35;
  compare('GET /balance', constant, { url: `${service.url}/api/v1/balance`, headers: auth }, readTarget);
  compare('GET /orders/{id}', constant, { url: `${service.url}/api/v1/orders/${seeded.orderId}`, headers: auth }, readTarget);
  compare('GET /quote', constant, { url: `${service.url}/api/v1/quote?product=stars&quantity=100`, headers: auth }, readTarget);
  const creation = compare(
    'POST /orders, 100 accounts',
    { url: `${baseline.url}/tx`, method: 'POST', bodies: 'tx', accounts: ACCOUNTS },
    { url: `${service.url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: seeded.keys },
    engine === 'sqlite' ? 0.7 : 0.5,
  );
  compare(
    'POST /orders, one account',
    { url: `${baseline.url}/tx`, method: 'POST', bodies: 'tx', accounts: 1 },
    { url: `${service.url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: [seeded.keys[0]] },
    engine === 'sqlite' ? 0.5 : 0.35,
  );

  // Fulfilment keeps up: create at half the maximum creation rate; the queue must stay bounded.
  const rate = Math.max(1, Math.floor(creation.rps / 2));
  const depths = [];
  const sampler = setInterval(
    () =>
      queueDepth(service.url).then(
        (d) => depths.push(d),
        () => undefined,
      ),
    1000,
  );
  load({ url: `${service.url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: seeded.keys, duration: PIPELINE_SECONDS, overallRate: rate, connections: 8 });
  clearInterval(sampler);
  const half = Math.floor(depths.length / 2);
  const firstHalfMax = Math.max(0, ...depths.slice(0, half));
  const secondHalfMax = Math.max(0, ...depths.slice(half));
  results.push({
    name: `pipeline at ${rate} orders/s: max pending queue (2nd half vs 1st)`,
    unit: 'orders',
    baseline: firstHalfMax,
    value: secondHalfMax,
    ratio: null,
    target: 'bounded',
    pass: secondHalfMax <= firstHalfMax * 1.5 + rate,
  });

  if (engine === 'sqlite') {
    const rss = rssMb(service.child.pid);
    results.push({ name: 'peak RSS of serve under load (embedded)', unit: 'MB', baseline: null, value: Math.round(rss), ratio: null, target: '≤ 200', pass: rss <= 200 });
  }
  await seeded.close();
  service.child.kill('SIGTERM');
  baseline.child.kill('SIGTERM');
  await measureTableSize();
} finally {
  service.child.kill('SIGTERM');
  baseline.child.kill('SIGTERM');
}

fs.mkdirSync(path.join(root, 'bench', 'results'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench', 'results', 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nStarport bench (${engine}${smoke ? ', smoke' : ''}, ${RUNS} pair(s) of ${DURATION} s runs, ${CONNECTIONS} connections, ${os.cpus().length} CPUs)\n`);
const fmt = (v) => (v === null || v === undefined ? '—' : typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v));
const rows = results.map((r) => [r.name, fmt(r.baseline), fmt(r.value), r.unit, fmt(r.ratio), String(r.target), r.pass === null ? '' : r.pass ? 'ok' : 'MISS']);
const header = ['figure', 'baseline', 'starport', 'unit', 'ratio', 'target', ''];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
for (const row of [header, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
