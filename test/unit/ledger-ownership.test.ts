import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

/**
 * Money moves only through src/ledger: no other file of the service writes the `balances`,
 * `journal` or `balance_days` tables, in Kysely or in SQL text. Migrations, which shape the tables, are the one
 * exception.
 */
const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
const OWNER = path.join(SRC, 'ledger') + path.sep;
const MIGRATIONS = path.join(SRC, 'db', 'migrations') + path.sep;

const WRITES = [
  /\b(insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*['"`](balances|journal|balance_days)['"`]/,
  /\b(insert\s+into|update|delete\s+from|replace\s+into|merge\s+into)\s+(balances|journal|balance_days)\b/i,
];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

function writersOfMoney(files: string[]): string[] {
  return files.flatMap((file) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, index) => (WRITES.some((pattern) => pattern.test(line)) ? [`${path.relative(SRC, file)}:${index + 1}: ${line.trim()}`] : [])),
  );
}

describe('the ledger owns the money tables', () => {
  test('no file outside src/ledger (migrations aside) writes balances or journal', () => {
    const others = sourceFiles(SRC).filter((file) => !file.startsWith(OWNER) && !file.startsWith(MIGRATIONS));
    expect(others.length).toBeGreaterThan(100);
    expect(writersOfMoney(others)).toEqual([]);
  });

  test('the check sees writes in both forms (it fails on a file that writes)', () => {
    const ledgerFiles = sourceFiles(OWNER);
    const found = writersOfMoney(ledgerFiles);
    // ledger.ts writes through Kysely, the one-statement reserve in SQL text.
    expect(found.some((line) => line.startsWith(`ledger${path.sep}ledger.ts`) && line.includes("updateTable('balances')"))).toBe(true);
    expect(found.some((line) => line.includes('reserve-in-statement.ts') && /update balances/.test(line))).toBe(true);
    expect(found.some((line) => line.includes('reserve-in-statement.ts') && /insert into journal/.test(line))).toBe(true);
  });
});
