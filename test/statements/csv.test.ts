import { expect, test } from 'vitest';
import { STATEMENT_CSV_HEADER, statementCsv } from '../../src/statements/csv.js';
import { everyAccountCsv, revenueCsv, revenueOf } from '../../src/statements/reports.js';
import type { Statement } from '../../src/statements/statement.js';

/** Statements as CSV: exact decimals, and every text cell a spreadsheet would run as a formula neutralised (src/domain/csv.ts). */

const statement: Statement = {
  accountId: 'acct_csv',
  mode: 'live',
  month: '2025-02',
  from: Date.UTC(2025, 1, 1),
  to: Date.UTC(2025, 2, 1),
  complete: true,
  generatedAt: Date.UTC(2025, 3, 1),
  opening: { available: 1_500_000_000n, reserved: 250_000_000n },
  deposits: {
    count: 2,
    amount: 24_888_888_488n,
    ton: { count: 1, amount: 20_000_000_000n },
    usdt: {
      count: 1,
      amount: 4_888_888_488n,
      usdt: 12_345_678n,
      lines: [{ txHash: '+abc', usdt: 12_345_678n, rate: '2.5', amount: 4_888_888_488n, creditedAt: Date.UTC(2025, 1, 3) }],
    },
  },
  placed: { count: 1, amount: 250_000_000n },
  delivered: { count: 1, amount: 250_000_000n, products: [{ product: 'stars', count: 1, quantity: 50n, amount: 250_000_000n }] },
  failed: { count: 0, amount: 0n },
  adjustments: {
    count: 2,
    amount: -1n,
    credits: 1n,
    debits: 2n,
    lines: [
      { createdAt: Date.UTC(2025, 1, 5), amount: 1n, reason: '=HYPERLINK("http://evil")' },
      { createdAt: Date.UTC(2025, 1, 6), amount: -2n, reason: '@SUM(A1), "quoted"\r\nnext' },
    ],
  },
  closing: { available: 26_138_888_487n, reserved: 250_000_000n },
};

test('the client’s CSV: one line per figure, no operator reasons, formula cells neutralised', () => {
  const csv = statementCsv(statement);
  const lines = csv.split('\r\n');
  expect(lines[0]).toBe(STATEMENT_CSV_HEADER);
  expect(csv).not.toContain('HYPERLINK');
  expect(lines).toContain("USDT deposit,'+abc at 2.5 USD/TON,2025-02-03T00:00:00.000Z,1,12.345678 USDT,4.888888488");
  expect(lines).toContain('orders placed (reserved),all,,1,,-0.25');
  expect(lines).toContain('orders delivered,stars,,1,50,0.25');
  expect(lines).toContain('adjustments,debits,,,,-0.000000002');
  expect(lines).toContain('adjustment,operator adjustment,2025-02-06T00:00:00.000Z,1,,-0.000000002');
  expect(lines).toContain('closing balance,available,2025-03-01T00:00:00.000Z,,,26.138888487');
  expect(csv.endsWith('\r\n')).toBe(true);
});

test('the operator’s CSV has the reasons, quoted and neutralised', () => {
  const csv = statementCsv(statement, { withReasons: true });
  expect(csv).toContain('adjustment,"\'=HYPERLINK(""http://evil"")",2025-02-05T00:00:00.000Z,1,,0.000000001');
  expect(csv).toContain('adjustment,"\'@SUM(A1), ""quoted""\r\nnext",2025-02-06T00:00:00.000Z,1,,-0.000000002');
});

test('every account’s CSV and the revenue report', () => {
  const rows = [{ email: '=1+1@example.com', statement }];
  const every = everyAccountCsv(rows).split('\r\n');
  expect(every[0]).toMatch(/^account_id,email,month,complete,opening_available_ton,/);
  expect(every[1]).toBe("acct_csv,'=1+1@example.com,2025-02,yes,1.5,0.25,20,4.888888488,12.345678,1,0.25,1,0.25,0,0,-0.000000001,26.138888487,0.25");
  const revenue = revenueCsv({ year: 2025, month: 2 }, revenueOf([...rows, { email: 'b@example.com', statement: { ...statement, accountId: 'acct_b' } }])).split('\r\n');
  expect(revenue).toEqual([
    'month,account_id,email,product,orders_delivered,quantity,amount_ton',
    "2025-02,acct_csv,'=1+1@example.com,stars,1,50,0.25",
    '2025-02,acct_b,b@example.com,stars,1,50,0.25',
    '2025-02,total,,,2,,0.5',
    '',
  ]);
});
