// @ts-check
// The baseline of `npm run bench`: the least a Fastify service on this machine can do for each
// measured route, with the same driver and durability settings as Starport. Run as a child
// process: node bench/baseline-server.mjs <sqlite-dir | postgres://…> <accounts> [PostgreSQL pool size, 10]
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const [target, accountsArg, poolSizeArg] = process.argv.slice(2);
const accounts = Number(accountsArg ?? 100);
const poolSize = Number(poolSizeArg ?? 10);
const app = Fastify({ logger: false });

app.get('/constant', async () => ({ ok: true, balance: { value: '1', reserved: '0', currency: 'TON' }, mode: 'test' }));

/** One transaction of the same shape as an order creation: lock/update a balance row, insert a row. */
let transact;
if (target.startsWith('postgres')) {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: target, max: poolSize });
  await pool.query('drop table if exists bench_orders, bench_balances');
  await pool.query('create table bench_balances (id int primary key, available bigint not null check (available >= 0))');
  await pool.query('create table bench_orders (id text primary key, account_id int not null, amount bigint not null, created_at bigint not null)');
  await pool.query('insert into bench_balances select g, 1000000000000000 from generate_series(1, $1) g', [accounts]);
  transact = async (account) => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('update bench_balances set available = available - 1 where id = $1 and available >= 1', [account]);
      await client.query('insert into bench_orders values ($1, $2, 1, $3)', [randomUUID(), account, Date.now()]);
      await client.query('commit');
    } finally {
      client.release();
    }
  };
} else {
  const Database = (await import('better-sqlite3')).default;
  fs.mkdirSync(target, { recursive: true });
  const db = new Database(path.join(target, 'baseline.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 10000');
  db.pragma('temp_store = MEMORY');
  db.defaultSafeIntegers(true);
  db.exec('drop table if exists bench_orders; drop table if exists bench_balances');
  db.exec('create table bench_balances (id integer primary key, available bigint not null check (available >= 0))');
  db.exec('create table bench_orders (id text primary key, account_id integer not null, amount bigint not null, created_at bigint not null)');
  const seed = db.prepare('insert into bench_balances values (?, 1000000000000000)');
  db.transaction(() => {
    for (let i = 1; i <= accounts; i++) seed.run(i);
  })();
  const update = db.prepare('update bench_balances set available = available - 1 where id = ? and available >= 1');
  const insert = db.prepare('insert into bench_orders values (?, ?, 1, ?)');
  const tx = db.transaction((account) => {
    update.run(account);
    insert.run(randomUUID(), account, Date.now());
  });
  transact = async (account) => tx.immediate(account);
}

app.post('/tx', async (request, reply) => {
  await transact(Number(/** @type {{ account?: unknown } | undefined} */ (request.body)?.account ?? 1));
  return reply.code(201).send({ ok: true });
});

await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (app.server.address()).port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
