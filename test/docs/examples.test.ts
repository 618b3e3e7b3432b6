import { execFile } from 'node:child_process';
import dns from 'node:dns';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { childEnv, PROJECT_ROOT } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * Docs that run as written: every ```sh / ```bash block of README.md and docs/api.md, in order,
 * with bash -e -o pipefail against a started service (and bin/starport against its database).
 * A block fails the test on a non-zero exit or an error answer (`"ok":false`).
 *
 * What is substituted, and only this: the documented origin http://127.0.0.1:3000, the e-mail
 * you@example.com (a fresh one), and the sample ids and keys (acct_…, sk_live_…, sk_test_…,
 * ord_… of the documented length) by the real ones the examples printed before (or, before any,
 * an account and order made here). STARPORT_API_KEY and STARPORT_BASE_URL are set as the docs
 * say to set them. A block right after `<!-- doc-example: skip — reason -->` is not run (used
 * for starting a server and for synopses); after `<!-- doc-example: live key -->` it runs with
 * the live key.
 */
const FILES = ['README.md', 'docs/api.md'];
const DOC_ORIGIN = 'http://127.0.0.1:3000';

interface Block {
  file: string;
  line: number;
  code: string;
  marker: string | undefined;
}

function shellBlocks(file: string): Block[] {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  const blocks: Block[] = [];
  for (const match of text.matchAll(/(?:<!-- doc-example: ([^>]*?) -->\n(?:\n)?)?```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    const line = text.slice(0, match.index).split('\n').length + (match[1] ? 1 : 0);
    blocks.push({ file, line, code: match[2] as string, marker: match[1] });
  }
  return blocks;
}

function run(code: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-e', '-o', 'pipefail', '-c', code], { env, cwd: PROJECT_ROOT, timeout: 60_000, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      const exit = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code: exit, stdout, stderr });
    });
  });
}

let h: Harness;
/** Whether this machine has no DNS (the webhook example registers a public host name). */
let offline = false;
let databaseEnv: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness();
  offline = await dns.promises.lookup('example.com').then(
    () => false,
    () => true,
  );
  if (process.env.TEST_ENGINE === 'postgres') {
    const row = await h.service.db.kysely.selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name')).executeTakeFirstOrThrow();
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `/${row.name}`;
    databaseEnv = { DATABASE_URL: url.toString() };
  }
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe.each(FILES)('the shell examples of %s', (file) => {
  test('run as written against a started service', { timeout: 240_000 }, async () => {
    // Before the examples print their own: an account with test funds and an order of it.
    const seed = await h.account({ test: '100' });
    const order = await h.inject({
      method: 'POST',
      url: '/api/v1/orders',
      headers: { authorization: `Bearer ${seed.testKey}`, 'idempotency-key': `doc-seed-${Date.now()}`, 'content-type': 'application/json' },
      payload: { product: 'stars', recipient: '@jane_doe', quantity: 50 },
    });
    expect(order.statusCode, order.body).toBe(201);
    const latest: Record<string, string> = { acct: seed.accountId, sk_live: seed.liveKey, sk_test: seed.testKey, ord: order.json().id };
    const email = `docs-${process.pid}-${Date.now()}@example.com`;

    const blocks = shellBlocks(file);
    expect(blocks.length, `${file} has shell examples`).toBeGreaterThan(3);
    const ran: string[] = [];
    for (const block of blocks) {
      const where = `${file}:${block.line}`;
      if (block.marker?.startsWith('skip')) continue;
      const liveKey = block.marker === 'live key';
      if (block.marker !== undefined && !liveKey) throw new Error(`${where}: unknown doc-example marker "${block.marker}"`);
      const code = block.code
        .replaceAll(DOC_ORIGIN, h.url)
        .replaceAll('you@example.com', email)
        .replace(/\bacct_[0-9A-Za-z]{22}\b/g, () => latest.acct as string)
        .replace(/\bord_[0-9A-Za-z]{22}\b/g, () => latest.ord as string)
        .replace(/\bsk_live_[0-9A-Za-z]{38}\b/g, () => latest.sk_live as string)
        .replace(/\bsk_test_[0-9A-Za-z]{38}\b/g, () => latest.sk_test as string);
      const env = childEnv({
        DATA_DIR: h.dataDir,
        PUBLIC_URL: h.url,
        ...databaseEnv,
        STARPORT_API_KEY: liveKey ? latest.sk_live : latest.sk_test,
        STARPORT_BASE_URL: `${h.url}/api/v1`,
      });
      const result = await run(code, env);
      if (offline && /"code":"invalid_url","message":"url cannot be used: [^"]* does not resolve/.test(result.stdout)) {
        // The webhook example's host must resolve when the endpoint is created: not here.
        console.warn(`${where}: skipped the answer check, this machine cannot resolve the example's host (no DNS)`);
        continue;
      }
      const report = `${where}\n$ ${code}\nexit ${result.code}\nstdout: ${result.stdout.slice(0, 1500)}\nstderr: ${result.stderr.slice(0, 1500)}`;
      expect(result.code, report).toBe(0);
      expect(result.stdout, report).not.toMatch(/"ok"\s*:\s*false/);
      // A request that prints nothing (curl reading [gte] as a URL pattern did) is no example.
      if (/\bcurl\b/.test(code)) expect(result.stdout.trim(), `${where} prints an answer`).not.toBe('');
      // What this example printed is what the next ones use.
      for (const [name, pattern] of [
        ['acct', /\bacct_[0-9A-Za-z]{22}\b/],
        ['sk_live', /\bsk_live_[0-9A-Za-z]{38}\b/],
        ['sk_test', /\bsk_test_[0-9A-Za-z]{38}\b/],
        ['ord', /"id"\s*:\s*"(ord_[0-9A-Za-z]{22})"/],
      ] as const) {
        const found = pattern.exec(result.stdout);
        if (found) latest[name] = found[1] ?? found[0];
      }
      ran.push(where);
    }
    console.log(`${file}: ${ran.length} of ${blocks.length} shell examples ran clean`);
  });
});
