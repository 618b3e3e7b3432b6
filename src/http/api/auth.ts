import type { FastifyRequest } from 'fastify';
import { type Authentication, authenticate } from '../../accounts/accounts.js';
import { ApiError } from '../../domain/api-error.js';
import { hashApiKey, type Mode } from '../../domain/api-key.js';
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
 * A route's read that needs no caller to start (an order by its id, the balance under a key's
 * hash), started beside the key's lookup when there is one (PostgreSQL): both then take one
 * round trip instead of one after the other. The handler checks what it gets against the
 * caller, and never sees it unless the key was accepted.
 */
export type Prefetch = (request: FastifyRequest, keyHash: string) => Promise<unknown>;

/**
 * `Authorization: Bearer <key>` (CONTRACT "Modes and keys"): the scheme is case-insensitive
 * and followed by exactly one space; a missing header, another scheme or an empty credential
 * is missing_api_key; anything else that is not a live, well-formed key is invalid_api_key.
 */
export function authenticateRequest(db: Db, request: FastifyRequest, prefetch?: Prefetch): Caller | Promise<Caller> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^([^ ]*)(?: ([\s\S]*))?$/.exec(header);
  const credential = match && match[1]?.toLowerCase() === 'bearer' ? match[2] : undefined;
  if (!credential) {
    throw new ApiError('missing_api_key', 'Send your API key as "Authorization: Bearer sk_live_…" or "Bearer sk_test_…".');
  }
  // Most keys are answered from the cache: no promise then (issue 10).
  const result = authenticate(db, credential);
  if (!(result instanceof Promise)) return callerOf(result);
  if (prefetch) {
    // Hashed a second time (about a microsecond): authenticate keeps the hash to itself.
    const read = prefetch(request, hashApiKey(credential));
    // Awaited by the handler only if the key is accepted: a refusal must not leave it unhandled.
    read.catch(() => undefined);
    request.prefetched = read;
  }
  return result.then(callerOf);
}

/** What the route's Prefetch started for this request, if it did (T: what that Prefetch reads). */
export function prefetched<T>(request: FastifyRequest): Promise<T> | undefined {
  return request.prefetched as Promise<T> | undefined;
}

function callerOf(result: Authentication): Caller {
  if (!result.ok) throw new ApiError(result.code, MESSAGES[result.code]);
  return { accountId: result.accountId, mode: result.mode, keyId: result.keyId };
}
