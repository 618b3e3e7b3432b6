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

/** The key usernames compare by. */
export function normalizeUsername(username: string): string {
  return username.toLowerCase();
}
