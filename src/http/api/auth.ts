import type { FastifyRequest } from 'fastify';
import { authenticate } from '../../accounts/accounts.js';
import type { Authentication } from '../../accounts/key-verdict.js';
import { ApiError } from '../../domain/api-error.js';
import { hashApiKey, type Mode, parseApiKey } from '../../domain/api-key.js';
import type { Db } from '../../db/engine.js';

export interface Caller {
  accountId: string;
  mode: Mode;
  /** The key's row id: identifies it for per-key limits without holding the secret. */
  keyId: string;
  /** No owner of the account has verified an e-mail address yet (docs/api.md "Authentication"). */
  unverified: boolean;
  /** The account's price plan, null on the global markup: read with the key (src/accounts/key-verdict.ts). */
  planName: string | null;
}

/**
 * PostgreSQL: a route's read that takes the key's verdict with it (KEY_VERDICT_COLUMNS beside
 * the order by its id, or the balance under the key's hash), so that the key and the data take
 * one statement instead of two. Such reads are coalesced like the key's own lookup: the
 * requests of one event-loop turn share one statement. Each is read when the request asks,
 * never from a cache, so a reissued key is refused on the very next request (docs/api.md "Authentication").
 * The handler sees the data only if the key was accepted.
 */
export type Prefetch = (request: FastifyRequest, keyHash: string) => Promise<{ authentication: Authentication; data: unknown }>;

/**
 * `Authorization: Bearer <key>` (docs/api.md "Authentication"): the scheme is case-insensitive
 * and followed by exactly one space; a missing header, another scheme or an empty credential
 * is missing_api_key; anything else that is not a live, well-formed key is invalid_api_key.
 */
export function authenticateRequest(db: Db, request: FastifyRequest, prefetch?: Prefetch): Caller | Promise<Caller> {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^([^ ]*)(?: ([\s\S]*))?$/.exec(header);
  const credential = match && match[1]?.toLowerCase() === 'bearer' ? match[2] : undefined;
  if (!credential) {
    throw new ApiError('missing_api_key');
  }
  if (prefetch) return authenticateWithData(request, credential, prefetch);
  // Most keys are answered from the cache: no promise then (docs/performance-history.md "Eighth round").
  const result = authenticate(db, credential);
  if (!(result instanceof Promise)) return callerOf(result);
  return result.then(callerOf);
}

function authenticateWithData(request: FastifyRequest, credential: string, prefetch: Prefetch): Caller | Promise<Caller> {
  // As `authenticate`: a key of the wrong layout or checksum is refused before any lookup.
  if (!parseApiKey(credential)) return callerOf({ ok: false, code: 'invalid_api_key' });
  const read = prefetch(request, hashApiKey(credential));
  const data = read.then((found) => found.data);
  // Awaited by the handler only if the key is accepted: a refusal must not leave it unhandled.
  data.catch(() => undefined);
  request.prefetched = data;
  return read.then((found) => callerOf(found.authentication));
}

/** What the route's Prefetch started for this request, if it did (T: what that Prefetch reads). */
export function prefetched<T>(request: FastifyRequest): Promise<T> | undefined {
  return request.prefetched as Promise<T> | undefined;
}

function callerOf(result: Authentication): Caller {
  if (!result.ok) throw new ApiError(result.code);
  return { accountId: result.accountId, mode: result.mode, keyId: result.keyId, unverified: result.unverified, planName: result.planName };
}
