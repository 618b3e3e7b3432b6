import { type Kysely, sql } from 'kysely';
import { displayPrefix, generateApiKey, hashApiKey, type Mode, parseApiKey } from '../domain/api-key.js';
import { newId } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import { coalescedRead, preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { openBalances } from '../ledger/ledger.js';
import { type Authentication, authenticationOf, KEY_VERDICT_COLUMNS, keyVerdictSource } from './key-verdict.js';
import { ensurePerson } from './people.js';
import { apiKeyChanged } from '../notifications/notices.js';

export class AccountError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export interface NewAccount {
  accountId: string;
  liveKey: string;
  testKey: string;
}

/**
 * Creates an account with zero balances in both modes and one key per mode (shown once). The
 * person with the account's e-mail (created without a password if new) becomes its owner.
 * `within` runs inside the same transaction (the operator's audit record).
 */
export async function createAccount(db: Db, email: string, now = Date.now(), within?: (tx: Kysely<Database>, account: NewAccount) => Promise<unknown>): Promise<NewAccount> {
  const normalized = normalizeEmail(email);
  if (!EMAIL.test(normalized) || normalized.length > 254) throw new AccountError(`not an e-mail address: "${email}"`);
  const accountId = newId('acct');
  try {
    return await db.kysely.transaction().execute(async (tx) => {
      await tx.insertInto('accounts').values({ id: accountId, email: normalized, status: 'active', created_at: now }).execute();
      await openBalances(tx, accountId);
      const liveKey = await insertKey(tx, accountId, 'live', now);
      const testKey = await insertKey(tx, accountId, 'test', now);
      const personId = await ensurePerson(tx, normalized, now);
      await tx.insertInto('memberships').values({ account_id: accountId, person_id: personId, role: 'owner', created_at: now }).execute();
      await within?.(tx, { accountId, liveKey, testKey });
      return { accountId, liveKey, testKey };
    });
  } catch (error) {
    if (db.engine.isUniqueViolation(error)) throw new AccountError(`an account with e-mail ${normalized} already exists`);
    throw error;
  }
}

async function insertKey(tx: Kysely<Database>, accountId: string, mode: Mode, now: number): Promise<string> {
  const key = generateApiKey(mode);
  await tx
    .insertInto('api_keys')
    .values({ id: newId('key'), account_id: accountId, mode, key_hash: hashApiKey(key), display_prefix: displayPrefix(key), created_at: now })
    .execute();
  return key;
}

/**
 * Revokes the account's active key of this mode and issues a new one, in one transaction.
 * The old key stops working for the very next request on every node and process. On
 * PostgreSQL every request looks its key up. On SQLite `authenticate` answers active keys from
 * a per-process cache, but an entry only counts while Db.keysVersion is what it was when the
 * entry was made, and this commit changes it everywhere: `PRAGMA data_version` moves in every
 * other connection (another process, the CLI), and this connection's own writes to api_keys,
 * accounts and account_plans are counted by TEMP triggers (src/db/sqlite.ts). The next request therefore
 * reads the key again and finds it revoked. `within` runs inside the same transaction (the
 * operator's audit record), with the new key's display prefix.
 */
export async function reissueKey(
  db: Db,
  accountId: string,
  mode: Mode,
  now = Date.now(),
  within?: (tx: Kysely<Database>, newKeyPrefix: string) => Promise<unknown>,
): Promise<string> {
  return db.kysely.transaction().execute(async (tx) => {
    // Two reissues at once (dashboard and CLI, two operators) must queue on the account row:
    // otherwise on PostgreSQL both revoke the same key and the second new key breaks the
    // one-active-key index (found by the reliability suite).
    const account = await db.engine.lockForUpdate(tx.selectFrom('accounts').select('id').where('id', '=', accountId)).executeTakeFirst();
    if (!account) throw new AccountError(`no account ${accountId}`);
    await tx.updateTable('api_keys').set({ revoked_at: now }).where('account_id', '=', accountId).where('mode', '=', mode).where('revoked_at', 'is', null).execute();
    const key = await insertKey(tx, accountId, mode, now);
    await apiKeyChanged(tx, accountId, mode, 'reissued', displayPrefix(key), now);
    await within?.(tx, displayPrefix(key));
    return key;
  });
}

/** Resolves a bearer key. The layout and checksum are checked before any database lookup. */
const selectKeys = (db: Kysely<Database>) => keyVerdictSource(db).select(['k.key_hash', ...KEY_VERDICT_COLUMNS]);
const selectKeyByHash = coalescedRead(
  preparedQuery((db, keyHash: string) => selectKeys(db).where('k.key_hash', '=', keyHash)),
  preparedQuery((db, keyHashes: string[]) => selectKeys(db).where('k.key_hash', '=', sql<string>`any(${keyHashes})`)),
  (row) => row.key_hash,
);

/**
 * Answered at once (no promise) when no lookup is needed: a malformed key, or an active key the
 * cache still vouches for. Every API request asks, and most are answered so.
 */
export function authenticate(db: Db, key: string): Authentication | Promise<Authentication> {
  // Header values are bounded by Node's header size limit, so hashing before the layout check
  // costs little; a key the cache vouches for was well formed when it was cached.
  const keyHash = hashApiKey(key);
  // Read before the lookup: a change that lands in between gives the next request a new stamp.
  const stamp = db.keysVersion?.();
  const cache = stamp === undefined ? undefined : keyCacheOf(db);
  const cached = cache?.get(keyHash);
  if (cached && cached.stamp === stamp) return cached.result;
  if (!parseApiKey(key)) return { ok: false, code: 'invalid_api_key' };
  return lookUpAndCache(db, keyHash, cache, stamp);
}

async function lookUpAndCache(db: Db, keyHash: string, cache: KeyCache | undefined, stamp: string | undefined): Promise<Authentication> {
  const result = await lookUpKey(db, keyHash);
  if (cache && stamp !== undefined && result.ok) {
    if (cache.size >= KEY_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(keyHash, { stamp, result });
  }
  return result;
}

async function lookUpKey(db: Db, keyHash: string): Promise<Authentication> {
  const [row] = await selectKeyByHash(db.kysely, keyHash);
  return authenticationOf(row);
}

/**
 * Active keys already looked up, by key hash, each valid only while Db.keysVersion still
 * gives the stamp it was read under: any change to any key, account or account's plan, by any
 * process, empties it in effect, so a reissue revokes the old key, and a plan assignment
 * prices, from the very next request.
 */
const KEY_CACHE_SIZE = 10_000;
type KeyCache = Map<string, { stamp: string; result: Authentication }>;
const keyCaches = new WeakMap<Db, KeyCache>();

function keyCacheOf(db: Db): KeyCache {
  let cache = keyCaches.get(db);
  if (!cache) keyCaches.set(db, (cache = new Map()));
  return cache;
}

export interface ActiveKey {
  id: string;
  mode: Mode;
  displayPrefix: string;
  createdAt: number;
}

/** The account's active key per mode (at most one each), in one query. */
export async function activeKeys(db: Db, accountId: string): Promise<Partial<Record<Mode, ActiveKey>>> {
  const rows = await db.kysely
    .selectFrom('api_keys')
    .select(['id', 'mode', 'display_prefix', 'created_at'])
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .execute();
  return Object.fromEntries(rows.map((r) => [r.mode, { id: r.id, mode: r.mode, displayPrefix: r.display_prefix, createdAt: Number(r.created_at) }]));
}
