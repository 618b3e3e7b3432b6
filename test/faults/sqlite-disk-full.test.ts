import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQLITE_FILE_NAME } from '../../src/db/sqlite.js';
import { runCli } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { signedUp, type WebClient } from '../support/web.js';
import { expectOk, FINAL, getBalance, getOrder, newKey, pollUntil, postOrder, type Res, STARS_50 } from '../support/http.js';

/**
 * SQLite's disk fills up under a stream of orders (docs/operations-embedded.md "A full disk"):
 * every answer is 201 or 503 service_unavailable with Retry-After, never a 500; reads keep
 * answering; once space is back, writes succeed again without a restart, every acknowledged
 * order is there and settles, nothing refused was half-written, `ledger verify` and
 * `pragma integrity_check` are clean, and the checkpoint thread copies the WAL again.
 *
 * The full disk is a real one where the test may mount: a small tmpfs holding DATA_DIR, filled
 * with a file that is removed to give the space back. Elsewhere (no root, no mount permission)
 * it is `PRAGMA max_page_count` on the service's connection, which fails writes with the same
 * SQLITE_FULL but leaves the checkpoint thread's own connection unaffected.
 */

const SKIP = testEngine === 'postgres';
if (SKIP) console.log("sqlite-disk-full: skipped on PostgreSQL: it fills the disk under SQLite's own file (a PostgreSQL server's disk is the server's)");

/** Small enough that the WAL cannot reach the writer's own checkpoint threshold (see the checkpointer assertion). */
const TMPFS_SIZE = '3m';
/** Clients sending orders at once while the disk fills. */
const CLIENTS = 8;
/** Refusals to collect before the disk counts as full under load. */
const REFUSALS = 40;
/** A bound on the orders sent: the disk must be full well before this. */
const MAX_ORDERS = 5_000;

type Method = 'tmpfs' | 'max_page_count';

function tryMountTmpfs(dir: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim() || String(error);
  }
}

/** Writes a file until the file system has no space left; returns its path. */
function fillDisk(dir: string): string {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'w');
  try {
    for (const size of [256 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return filler;
}

/** Adds test funds through the dashboard form until the full disk refuses it; returns every answer. */
async function submitUntilRefused(client: WebClient): Promise<Array<{ status: number; body: string; headers: Record<string, unknown> }>> {
  const pages = [];
  for (let i = 0; i < 200; i++) {
    const page = await client.submit('/test/top-up', { amount: '1' });
    pages.push(page);
    if (page.status !== 303) break;
  }
  return pages;
}

describe.skipIf(SKIP)('SQLite on a full disk', { timeout: 120_000 }, () => {
  let dataDir: string;
  let method: Method;
  let h: Harness;
  let account: TestAccount;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-disk-full-'));
    // FULL_DISK_METHOD=max_page_count runs the fallback where mounting would work too.
    const refused = process.env.FULL_DISK_METHOD === 'max_page_count' ? 'FULL_DISK_METHOD=max_page_count' : tryMountTmpfs(dataDir);
    method = refused === undefined ? 'tmpfs' : 'max_page_count';
    console.log(
      method === 'tmpfs'
        ? `sqlite-disk-full: a real full disk: DATA_DIR on a ${TMPFS_SIZE} tmpfs mounted by the test, filled with a file`
        : `sqlite-disk-full: no tmpfs (${refused}); the full disk is PRAGMA max_page_count on the service's connection (the checkpoint thread's connection is not limited)`,
    );
    h = await startHarness({ DATA_DIR: dataDir });
    account = await h.account({ test: '1000000' });
  });

  afterAll(async () => {
    await h?.close();
    if (method === 'tmpfs') execFileSync('umount', [dataDir]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const raw = (statement: string) => sql.raw(statement).execute(h.service.db.kysely);
  const pragmaNumber = async (name: string) => Number(Object.values((await raw(`pragma ${name}`)).rows[0] as object)[0]);

  it('answers 503 with Retry-After while full, keeps reading, and recovers with nothing lost', async () => {
    const file = path.join(dataDir, SQLITE_FILE_NAME);
    // Something committed before the disk fills, to read while it is full.
    const before = await postOrder(h, account.testKey, STARS_50);
    expectOk(before, 201);
    const { client: dashboard } = await signedUp(h);

    // Fill the disk.
    let filler: string | undefined;
    if (method === 'tmpfs') filler = fillDisk(dataDir);
    else await raw(`pragma max_page_count = ${await pragmaNumber('page_count')}`);

    // Orders under load until the disk refuses them.
    const answers: Array<{ key: string; res: Res }> = [];
    let refusals = 0;
    let sent = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (refusals < REFUSALS && sent < MAX_ORDERS) {
          sent++;
          const key = newKey();
          const res = await postOrder(h, account.testKey, STARS_50, key);
          answers.push({ key, res });
          if (res.status === 503) refusals++;
        }
      }),
    );
    const byStatus: Record<number, number> = {};
    for (const { res } of answers) byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
    console.log(`sqlite-disk-full: ${sent} orders sent while the disk filled: ${JSON.stringify(byStatus)}`);
    expect(refusals, 'the disk filled up under load').toBeGreaterThanOrEqual(REFUSALS);
    expect(Object.keys(byStatus).sort()).toEqual(['201', '503'].filter((s) => byStatus[Number(s)]));
    for (const { res } of answers.filter((a) => a.res.status === 503)) {
      expect(res.body.error.code).toBe('service_unavailable');
      expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    }

    // Still full: reads answer, writes are refused.
    expectOk(await getOrder(h, account.testKey, before.body.id));
    expectOk(await getBalance(h, account.testKey));
    const created = answers.filter((a) => a.res.status === 201);
    for (const { res } of created.slice(-3)) expectOk(await getOrder(h, account.testKey, res.body.id));
    // A lone small order may still fit in the free room of existing pages: some order is refused.
    let stillFull: Res | undefined;
    for (let i = 0; i < 200 && !stillFull; i++) {
      const key = newKey();
      const res = await postOrder(h, account.testKey, STARS_50, key);
      answers.push({ key, res });
      if (res.status === 503) stillFull = res;
      else expect(res.status).toBe(201);
    }
    expect(stillFull?.status, 'still full after the reads').toBe(503);
    // The dashboard's forms: an error page, not a crash (a small write may still fit).
    const formAnswers = await submitUntilRefused(dashboard);
    expect(formAnswers.at(-1)?.status).toBe(503);
    for (const page of formAnswers) expect([303, 503]).toContain(page.status);
    expect(formAnswers.at(-1)?.body).toContain('Temporarily unavailable');
    expect(formAnswers.at(-1)?.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    console.log(`sqlite-disk-full: dashboard form while full: ${formAnswers.length - 1} accepted (303), then a 503 error page`);
    const walDuring = fs.statSync(`${file}-wal`).size;
    const fileDuring = fs.statSync(file).size;
    const pagesDuring = (await pragmaNumber('page_count')) * (await pragmaNumber('page_size'));
    console.log(`sqlite-disk-full: while full: WAL ${walDuring} B, database file ${fileDuring} B of ${pagesDuring} B in pages (what the file lacks is only in the WAL)`);

    const acknowledgedWhileFull = answers.filter((a) => a.res.status === 201);
    // Space back: a refused order, retried with its Idempotency-Key, goes through within 2 s.
    const refusedKeys = answers.filter((a) => a.res.status === 503).map((a) => a.key);
    const retriedKey = refusedKeys[0] as string;
    const freed = performance.now();
    if (filler) fs.rmSync(filler);
    else await raw('pragma max_page_count = 1073741823');
    const retried = await pollUntil(
      () => postOrder(h, account.testKey, STARS_50, retriedKey),
      (res) => res.status === 201,
      { timeoutMs: 2_000, intervalMs: 20, what: 'a write to succeed after space returned' },
    );
    const recoveryMs = Math.round(performance.now() - freed);
    console.log(`sqlite-disk-full: writes succeed again ${recoveryMs} ms after space returned, without a restart`);
    expect(recoveryMs).toBeLessThan(2_000);
    expectOk(await postOrder(h, account.testKey, STARS_50), 201);

    // Every acknowledged order exists and settles; no refused one was half-written.
    const { kysely } = h.service.db;
    const acknowledged = [before.body.id, ...acknowledgedWhileFull.map((a) => a.res.body.id), retried.body.id] as string[];
    const settled = await pollUntil(
      () => kysely.selectFrom('orders').select(['id', 'status']).where('id', 'in', acknowledged).execute(),
      (rows) => rows.length === acknowledged.length && rows.every((row) => FINAL.includes(row.status)),
      { timeoutMs: 30_000, what: 'every acknowledged order to reach a final status' },
    );
    expect(settled).toHaveLength(acknowledged.length);
    const halfWritten = await kysely.selectFrom('orders').select('id').where('idempotency_key', 'in', refusedKeys.slice(1)).execute();
    expect(halfWritten, 'orders refused with 503 left nothing behind').toEqual([]);
    console.log(`sqlite-disk-full: ${acknowledged.length} acknowledged orders, all final; 0 lost; ${refusedKeys.length - 1} refused orders left no row`);

    // The books and the file are sound.
    const verify = await runCli(['ledger', 'verify', '--json'], { env: { DATA_DIR: dataDir } });
    expect(JSON.parse(verify.stdout), verify.stderr).toEqual({ ok: true });
    expect(verify.code).toBe(0);
    expect((await raw('pragma integrity_check')).rows).toEqual([{ integrity_check: 'ok' }]);

    // The checkpoint thread carries on: it copies every page back into the database file. The
    // writer's own safety-net checkpoint needs more WAL than this file system can hold.
    const pageSize = await pragmaNumber('page_size');
    await pollUntil(
      async () => ({ file: fs.statSync(file).size, pages: (await pragmaNumber('page_count')) * pageSize }),
      (sizes) => sizes.file >= sizes.pages,
      { timeoutMs: 5_000, what: 'the checkpoint thread to copy the WAL into the database file' },
    );
    console.log(`sqlite-disk-full: after recovery the checkpoint thread copied the WAL: database file ${fs.statSync(file).size} B`);
  });
});
