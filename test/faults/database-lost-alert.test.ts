import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.js';

/**
 * A node that loses its database tells the operator how long for, once it is back
 * (docs/operations.md "Notifications"): an API-only node through its database watch, a worker
 * node through its notification worker. Both run as `serve` processes whose connections go
 * through a TCP proxy; the proxy resets them and refuses new ones, then lets them through again.
 * PostgreSQL only: an embedded SQLite database is not reached over a connection.
 */
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

const OPS = 'ops-database@example.com';

describe.skipIf(testEngine !== 'postgres')('a node that lost its database', () => {
  let database: FreshDatabase;
  let smtp: TestSmtpServer;
  let proxy: TcpFaultProxy;
  const nodes: ServeProcess[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    database = await freshDatabase();
    const url = new URL(database.env.DATABASE_URL as string);
    proxy = await startTcpFaultProxy(Number(url.port || 5432), url.hostname);
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
    await proxy?.close();
    await database?.dispose();
    await smtp?.close();
  });

  test('the API node and the worker node each report their outage once, with its length', async () => {
    const env = {
      ...database.env,
      DATABASE_URL: proxy.urlFor(database.env.DATABASE_URL as string),
      DATABASE_QUERY_TIMEOUT_MS: '2000',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Starport <noreply@example.com>',
      OPERATOR_EMAILS: OPS,
      NOTIFY_RETRY_DELAYS_MS: '200',
    };
    const [api, worker] = await Promise.all([startServe(env, 20_000, ['--role', 'api']), startServe(env, 20_000, ['--role', 'worker'])]);
    nodes.push(api, worker);

    await proxy.setMode('refuse');
    proxy.resetAll();
    // Each node has seen its database gone (its log says so once) before it comes back.
    await pollUntil(
      async () => [api.output().stdout, worker.output().stdout],
      ([a, w]) => /database watch: database unavailable/.test(a ?? '') && /notification worker: database unavailable/.test(w ?? ''),
      { what: 'both nodes to notice the database is gone', timeoutMs: 30_000 },
    );
    const readyWhileGone = await fetch(`${api.url}/readyz`);
    expect(readyWhileGone.status).toBe(503);
    await proxy.setMode('pass');

    const mails = await pollUntil(
      async () => smtp.mails.filter((m) => m.to.includes(OPS) && /lost its database/.test(m.subject)),
      (list) => list.length >= 2,
      { what: 'an alert from each node', timeoutMs: 30_000 },
    );
    for (const node of [api, worker]) {
      const mine = mails.filter((m) => m.text.includes(`(pid ${node.pid})`));
      expect(mine, `one alert naming pid ${node.pid}`).toHaveLength(1);
      expect(mine[0]?.text).toMatch(/could not reach its database for \d+ s; it is back now/);
    }
    // Both processes stayed up and serve again.
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    expect(smtp.mails.filter((m) => /lost its database/.test(m.subject))).toHaveLength(2);
  });
});
