// @ts-check
// Not part of the bench: `node bench/instructions.mjs <balance|order|quote|create|constant|tx> [requests]`
// counts the instructions one request costs the server, under valgrind's callgrind. On a shared
// machine time per request moves by a third within minutes; an instruction count repeats
// within a few percent, so it can rank changes that req/s and CPU time cannot. (It counts what
// valgrind's CPU runs: OpenSSL, for one, takes other code paths there than on the real CPU, so
// confirm a ranking with `perf` before trusting its size.)
//
// The server (`serve`, or the bench's baseline for `constant` and `tx`) runs with callgrind's
// instrumentation off while it warms up, so that V8 has compiled the hot paths, then on for the
// measured requests. One connection: every request is then alone in its event-loop turn, so
// nothing per turn (SQLite's read snapshot, the poll) is shared between a varying number of
// requests. Counts are user-space instructions of the event loop's I/O callbacks and
// immediates (below); the kernel's share (the socket writes) is not in them. Run it in two
// checkouts to compare two builds.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedBench } from './seed.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const route = process.argv[2] ?? 'quote';
const requests = Number(process.argv[3] ?? 1000);
const WARMUP = Number(process.env.WARMUP ?? 8000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-instructions-'));
const outFile = path.join(dataDir, 'callgrind.out');

try {
  const seeded = await seedBench({ dataDir, accounts: 100 });
  const env = { ...process.env, PORT: '0', DATA_DIR: dataDir, RATE_LIMIT_RPS: '0', LOG_LEVEL: 'warn', TEST_FULFILMENT_DELAY_MS: '0' };
  const args = route === 'constant' || route === 'tx' ? ['bench/baseline-server.mjs', path.join(dataDir, 'baseline'), '100'] : ['bin/starport', 'serve'];
  // Only what the event loop's I/O callbacks and immediates run is counted: not the compiler's
  // and the garbage collector's threads, and not timers. Under valgrind 1,000 requests take
  // seconds of wall time, so background timers (the worker's poll, the checkpointer) and
  // V8's late recompilations weighed as much as a sixth of the count and moved it by a fifth
  // between two runs of one build.
  const collect = ['--toggle-collect=uv__io_poll', '--toggle-collect=uv__run_check'];
  const valgrind = ['--tool=callgrind', '--instr-atstart=no', ...collect, `--callgrind-out-file=${outFile}`, '--smc-check=all-non-file'];
  const server = spawn('valgrind', [...valgrind, process.execPath, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  server.stderr.on('data', (chunk) => (errors += chunk));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    server.once('exit', () => reject(new Error(`the server exited before listening:\n${errors.slice(-2000)}`)));
  });
  const auth = { authorization: `Bearer ${seeded.keys[0]}` };
  const specs = {
    constant: { url: `${url}/constant` },
    tx: { url: `${url}/tx`, method: 'POST', bodies: 'tx', accounts: 100 },
    balance: { url: `${url}/api/v1/balance`, headers: auth },
    order: { url: `${url}/api/v1/orders/${seeded.orderId}`, headers: auth },
    quote: { url: `${url}/api/v1/quote?product=stars&quantity=100`, headers: auth },
    create: { url: `${url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: seeded.keys },
  };
  if (!specs[route]) throw new Error(`unknown route ${route}: one of ${Object.keys(specs).join(', ')}`);
  const load = (amount) =>
    JSON.parse(
      execFileSync(process.execPath, [path.join(root, 'bench', 'load.mjs'), JSON.stringify({ connections: Number(process.env.CONNECTIONS ?? 1), amount, ...specs[route] })], {
        encoding: 'utf8',
      }),
    );
  for (let left = WARMUP; left > 0; left -= 2000) load(Math.min(2000, left));
  execFileSync('callgrind_control', ['--instr=on', String(server.pid)], { stdio: 'ignore' });
  const measured = load(requests);
  execFileSync('callgrind_control', ['--instr=off', String(server.pid)], { stdio: 'ignore' });
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await seeded.close();
  // KEEP=<file>: keep callgrind's profile, for callgrind_annotate.
  if (process.env.KEEP) fs.copyFileSync(outFile, process.env.KEEP);
  const total = Number(/^totals: (\d+)/m.exec(fs.readFileSync(outFile, 'utf8'))?.[1]);
  if (measured.non2xx > 0 || measured.errors > 0) console.warn(`${measured.non2xx} non-2xx answers, ${measured.errors} errors`);
  console.log(`${route}: ${(total / measured.total / 1000).toFixed(1)} thousand instructions per request (${measured.total} requests after ${WARMUP} to warm up)`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
