/**
 * Recipient usernames (docs/api.md "POST /recipients/validate"): 4–32 characters of A-Za-z0-9_, starting with a
 * letter, not ending with "_", with or without one leading "@". Compared case-insensitively.
 */
const USERNAME = /^@?([A-Za-z][A-Za-z0-9_]{2,30}[A-Za-z0-9])$/;

/** The username without "@" as supplied (case kept), or undefined when malformed. */
export function parseUsername(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return USERNAME.exec(value)?.[1];
}

/** What a username is, for messages. */
export const USERNAME_RULES = 'a username is 4–32 letters, digits or underscores, starting with a letter and not ending with "_", optionally with one leading "@"';

/**
 * The first rule `value` breaks, as the end of a sentence ("may not end with "_""), or undefined
 * for a well-formed username. The same rules as parseUsername, in the order a person checks them.
 */
export function usernameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (parseUsername(value) !== undefined) return undefined;
  const name = value.startsWith('@') ? value.slice(1) : value;
  if (name.length < 4) return 'is too short: at least 4 characters after the "@"';
  if (name.length > 32) return 'is too long: at most 32 characters after the "@"';
  const foreign = [...name].find((c) => !/[A-Za-z0-9_]/.test(c));
  if (foreign !== undefined) return foreign === '@' ? 'may have only one "@", at the start' : 'may only have letters (a–z), digits and "_"';
  if (!/[A-Za-z]/.test(name[0] as string)) return 'must start with a letter';
  return 'may not end with "_"';
}

/** The key usernames compare by. */
export function normalizeUsername(username: string): string {
  return username.toLowerCase();
}
