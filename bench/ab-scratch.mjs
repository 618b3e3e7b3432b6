import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { seedBench } from '/work/main/bench/seed.mjs';
import { openDatabase } from '/work/main/dist/db/open.js';
import { sql } from 'kysely';
const root = '/work/main';
async function serve(dataDir) {
  const child = spawn(process.execPath, [path.join(root, 'bin/starport'), 'serve'], { env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => { let buf = ''; child.stdout.on('data', (d) => { buf += d; const m = buf.match(/listening on (\S+)/); if (m) resolve(m[1]); }); });
  return { child, url };
}
const sides = {};
for (const name of ['with', 'without']) {
  const dir = `/tmp/ab/${name}`; fs.rmSync(dir, { recursive: true, force: true });
  const seeded = await seedBench({ dataDir: dir, accounts: 100 });
  if (name === 'without') { const db = await openDatabase({ dataDir: dir }); await sql`drop index journal_daily`.execute(db.kysely); await db.close(); }
  sides[name] = { ...(await serve(dir)), keys: seeded.keys };
}
const run = (side) => JSON.parse(execFileSync(process.execPath, [path.join(root, 'bench/load.mjs'), JSON.stringify({ url: `${side.url}/api/v1/orders`, method: 'POST', bodies: 'orders', keys: side.keys, connections: 32, duration: 3 })], { maxBuffer: 1 << 26 }).toString());
const ratios = [];
for (let i = 0; i < 7; i++) {
  const order = i % 2 ? ['without', 'with'] : ['with', 'without'];
  const r = {};
  for (const n of order) r[n] = run(sides[n]).requests.average;
  ratios.push(r.with / r.without);
  console.log(`pair ${i}: with ${r.with.toFixed(0)}/s, without ${r.without.toFixed(0)}/s, ratio ${(r.with / r.without).toFixed(3)}`);
}
ratios.sort((a, b) => a - b);
console.log('median ratio with/without', ratios[3].toFixed(3));
for (const s of Object.values(sides)) s.child.kill('SIGTERM');
