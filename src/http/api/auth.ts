import type { FastifyRequest } from 'fastify';
import { type Authentication, authenticate } from '../../accounts/accounts.js';
import { ApiError } from '../../domain/api-error.js';
import type { Mode } from '../../domain/api-key.js';
import type { Db } from '../../db/engine.js';

export interface Caller {
  accountId: string;
  mode: Mode;
  /** The key's row id: identifies it for per-key limits without holding the secret. */
  keyId: string;
}

const MESSAGES = {
  invalid_api_key: 'The API key is not valid. Check that it was copied whole, e.g. sk_test_… (46 characters).',
  api_key_revoked: 'This API key was revoked (it was reissued). Use the current key from the dashboard.',
  account_disabled: 'This account is disabled. Contact support.',
} as const;

/**
 * `Authorization: Bearer <key>` (CONTRACT "Modes and keys"): the scheme is case-insensitive
 * and followed by exactly one space; a missing header, another scheme or an empty credential
 * is missing_api_key; anything else that is not a live, well-formed key is invalid_api_key.
 */
export function authenticateRequest(db: Db, request: FastifyRequest): Caller | Promise<Caller> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^([^ ]*)(?: ([\s\S]*))?$/.exec(header);
  const credential = match && match[1]?.toLowerCase() === 'bearer' ? match[2] : undefined;
  if (!credential) {
    throw new ApiError('missing_api_key', 'Send your API key as "Authorization: Bearer sk_live_…" or "Bearer sk_test_…".');
  }
  // Most keys are answered from the cache: no promise then (issue 10).
  const result = authenticate(db, credential);
  return result instanceof Promise ? result.then(callerOf) : callerOf(result);
}

function callerOf(result: Authentication): Caller {
  if (!result.ok) throw new ApiError(result.code, MESSAGES[result.code]);
  return { accountId: result.accountId, mode: result.mode, keyId: result.keyId };
}
