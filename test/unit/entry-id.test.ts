import { expect, test } from 'vitest';
import { entryId, entryLookup, newEntryIdHead } from '../../src/ledger/entry-id.js';

/** Journal entry ids carry their seq after a random head (src/ledger/entry-id.ts). */

test('a new id is a random head and the seq; the lookup reads the seq back', () => {
  const head = newEntryIdHead();
  expect(head).toMatch(/^jrn_[0-9A-Za-z]{22}$/);
  expect(newEntryIdHead()).not.toBe(head);
  expect(entryId(head, 1n)).toBe(`${head}1`);
  expect(entryLookup(entryId(head, 1n))).toEqual({ seq: 1n });
  expect(entryLookup(entryId(head, 9223372036854775807n))).toEqual({ seq: 9223372036854775807n });
});

test('an id of the head alone is an older entry, found by the id itself', () => {
  const head = newEntryIdHead();
  expect(entryLookup(head)).toEqual({ legacyId: head });
});

test('nothing else names an entry', () => {
  const head = newEntryIdHead();
  for (const id of ['', 'jrn_', 'jrn_short', `ord_${head.slice(4)}1`, `${head}0`, `${head}01`, `${head}1a`, `${head}12345678901234567890`, `${head}-1`]) {
    expect(entryLookup(id), id).toBeUndefined();
  }
});
