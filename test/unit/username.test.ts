import { describe, expect, it } from 'vitest';
import { normalizeUsername, parseUsername, usernameProblem } from '../../src/domain/username.js';

describe('parseUsername', () => {
  it.each([
    ['abcd', 'abcd'],
    ['@abcd', 'abcd'],
    ['a_b1', 'a_b1'],
    ['Test_User9', 'Test_User9'],
    ['@Test_User9', 'Test_User9'],
    ['a'.repeat(32), 'a'.repeat(32)],
    [`@${'Z'.repeat(32)}`, 'Z'.repeat(32)],
    ['a__b', 'a__b'],
    ['ABCD', 'ABCD'],
    ['test_invalid', 'test_invalid'],
  ])('accepts %j as %j', (input, name) => {
    expect(parseUsername(input)).toBe(name);
  });

  it.each([
    'abc', // 3 characters
    '@abc',
    'a'.repeat(33), // 33 characters
    `@${'a'.repeat(33)}`,
    '1abcd', // starts with a digit
    '_abcd', // starts with an underscore
    'abcd_', // ends with an underscore
    '@@abcd',
    'ab@cd',
    'abcd@',
    'ab cd',
    ' abcd',
    'abcd ',
    'abcd\n',
    't.me/abcd',
    'https://t.me/abcd',
    'ab-cd',
    'ab.cd',
    '\u0430bcd', // Cyrillic "а" first
    'abcд', // Cyrillic "д" last
    'abcé',
    '',
    '@',
  ])('rejects %j', (input) => {
    expect(parseUsername(input)).toBeUndefined();
    // And names a rule it breaks.
    expect(usernameProblem(input)).toEqual(expect.any(String));
  });

  it.each([1234, null, undefined, {}, { username: 'abcd' }, ['abcd'], true])('rejects the non-string %j', (input) => {
    expect(parseUsername(input)).toBeUndefined();
  });
});

describe('usernameProblem', () => {
  it.each([
    ['abcd', undefined],
    ['@a_b1', undefined],
    ['abcd_', 'may not end with "_"'],
    [' abcd', 'may only have letters (a–z), digits and "_"'],
    ['abcd\n', 'may only have letters (a–z), digits and "_"'],
    ['\u0430bcd', 'may only have letters (a–z), digits and "_"'],
    ['abcd@', 'may have only one "@", at the start'],
    ['9abcd', 'must start with a letter'],
    ['abc', 'is too short: at least 4 characters after the "@"'],
    ['a'.repeat(33), 'is too long: at most 32 characters after the "@"'],
    [undefined, 'must be a string'],
  ])('%j → %j', (input, problem) => {
    expect(usernameProblem(input)).toBe(problem);
  });
});

describe('normalizeUsername', () => {
  it('lower-cases', () => {
    expect(normalizeUsername('Test_User9')).toBe('test_user9');
    expect(normalizeUsername('ABCD')).toBe('abcd');
    expect(normalizeUsername('abcd')).toBe('abcd');
  });

  it('makes usernames that differ only in case equal', () => {
    const a = parseUsername('@TeSt_SlOw');
    const b = parseUsername('test_slow');
    expect(a).toBe('TeSt_SlOw');
    expect(normalizeUsername(a!)).toBe(normalizeUsername(b!));
  });
});
