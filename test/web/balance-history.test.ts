import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseTon } from '../../src/domain/money.js';
import { csvCell } from '../../src/domain/csv.js';
import { fundTestBalance } from '../../src/ledger/test-funding.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, signedUp, type WebClient } from '../support/web.js';

/** The dashboard's balance history page (per mode, paginated) and its CSV export. */

let h: Harness;
let client: WebClient;
let accountId: string;

beforeAll(async () => {
  h = await startHarness();
  const signed = await signedUp(h, '10.6.0.1');
  client = signed.client;
  accountId = await accountIdOf(h, signed.email);
  // 60 test movements (more than one page of 50), one with a reference a spreadsheet would run.
  for (let i = 1; i <= 59; i++) await fundTestBalance(h.service.db, { accountId, amount: BigInt(i) * 1_000_000n, reference: `req_${i}` });
  await fundTestBalance(h.service.db, { accountId, amount: 1n, reference: '=HYPERLINK("http://evil.example","x")' });
  await h.credit(accountId, 'live', '3');
});
afterAll(async () => {
  await h?.close();
});

const idsOn = (body: string) => [...body.matchAll(/<tr>\s*<td data-label="Date" class="when"><time datetime="([^"]+)"/g)].length;

describe('page', () => {
  test('newest first, 50 a page, Older then Newer; the nav links it; live shows only live', async () => {
    const first = await client.get('/test/balance');
    expect(first.status).toBe(200);
    expect(first.body).toContain('href="/test/balance" aria-current="page"');
    expect(idsOn(first.body)).toBe(50);
    // The newest row: the last funding (1 nanoton) with its (escaped) reference.
    const firstRow = first.body.split('<tbody>')[1]!.split('</tr>')[0]!;
    expect(firstRow).toContain('+0.000000001');
    expect(firstRow).toContain('=HYPERLINK(&quot;http://evil.example&quot;,&quot;x&quot;)');
    expect(first.body).not.toContain('rel="prev"');
    const older = /href="([^"]*after=[^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&') as string;
    const second = await client.get(older);
    expect(idsOn(second.body)).toBe(10);
    expect(second.body).not.toContain('rel="next"');
    const newer = /href="([^"]*before=[^"]+)" rel="prev"/.exec(second.body)?.[1]?.replace(/&amp;/g, '&') as string;
    const back = await client.get(newer);
    expect(back.body.split('<tbody>')[1]).toEqual(first.body.split('<tbody>')[1]);
    // A tampered cursor shows the first page.
    expect(idsOn((await client.get('/test/balance?after=jrn_bogus')).body)).toBe(50);

    const live = await client.get('/balance');
    expect(idsOn(live.body)).toBe(1);
    expect(live.body).toContain('Adjustment');
    expect(live.body).toContain('href="/balance/history.csv"');
  });

  test('needs a session', async () => {
    const anonymous = await h.inject({ method: 'GET', url: '/test/balance/history.csv' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toMatch(/^\/login/);
  });
});

describe('CSV export', () => {
  test('every entry, decimal amounts, a download name, injection-safe text', async () => {
    const res = await client.get('/test/balance/history.csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="starport-test-balance-history-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,type,amount,reserved_change,balance_value_after,balance_reserved_after,order_id,deposit_reference');
    expect(lines).toHaveLength(61);
    expect(lines[1]).toMatch(/^jrn_[0-9A-Za-z]+,\d{4}-[^,]+Z,deposit,0\.000000001,0,1\.770000001,0,,"'=HYPERLINK\(""http:\/\/evil\.example"",""x""\)"$/);
    expect(lines[60]).toMatch(/,deposit,0\.001,0,0\.001,0,,req_1$/);
    // The amounts sum to the balance.
    const sum = lines.slice(1).reduce((total, line) => total + parseTon(line.split(',')[3] as string, { allowNegative: true }), 0n);
    expect(sum).toBe(1_770_000_001n);
    const live = await client.get('/balance/history.csv');
    expect(live.body.trimEnd().split('\r\n')).toHaveLength(2);
    expect(live.body).toContain(',adjustment,3,0,3,0,,');
  });

  test('csvCell: formulas neutralised in text, numbers keep their sign, quoting per RFC 4180', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('-0.25', 'number')).toBe('-0.25');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell(null)).toBe('');
  });
});
