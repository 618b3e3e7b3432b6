import { randomBytes } from 'node:crypto';
import { type Algorithm, hash, verify } from '@node-rs/argon2';

/**
 * Dashboard passwords: argon2id with OWASP's first recommended setting (19 MiB, 2 passes,
 * 1 lane), ~40 ms per hash on this machine's CPU. `Algorithm` is a const enum that only the
 * TypeScript compiler can inline, so its value is spelled out.
 */
const ARGON2ID = 2 as Algorithm;
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const PASSWORD_MIN_LENGTH = 10;
/** Long inputs cost nothing to reject and a lot to hash. */
const PASSWORD_MAX_LENGTH = 256;

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (password.trim() === '') return 'The password cannot be only spaces.';
  return undefined;
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH * 4) return false;
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Spends the time of one verification when there is no hash to check (unknown e-mail, no
 * password set yet), so that response times do not tell which e-mails have accounts.
 */
export async function spendVerificationTime(password: string): Promise<void> {
  dummyHash ??= hashPassword(randomBytes(18).toString('base64'));
  await verifyPassword(await dummyHash, password);
}
