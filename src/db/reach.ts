import { type Kysely, sql } from 'kysely';

/**
 * Start-up against a database that is not there (docs/operations.md "Start-up and shutdown"):
 * every command waits up to DATABASE_CONNECT_TIMEOUT_S for PostgreSQL to answer, then fails
 * with one line that names what it could not reach, never the credentials.
 */

/** The database could not be reached or opened: the CLI prints the message alone (exit 3). */
export class DatabaseUnreachableError extends Error {}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2_000;
/** One attempt's limit: a server that accepts TCP and never answers must not hold start-up. */
const MAX_ATTEMPT_MS = 5_000;
/**
 * The deadline can leave the last attempt a millisecond, too little for even a refusal to
 * arrive on a busy machine. A timeout of an attempt shorter than this says nothing, so it does
 * not replace the reason an earlier attempt found.
 */
const TELLING_ATTEMPT_MS = 250;

/**
 * SQLSTATEs that mean "try again shortly": too_many_connections, the connection-exception class
 * (08…) and operator intervention (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now: the server is starting or stopping). Any other answer from the server
 * (a wrong password, no such database) will not change by waiting.
 */
function retryable(error: unknown): boolean {
  const code = errorCode(error);
  if (code === undefined || !/^[0-9A-Z]{5}$/.test(code)) return true; // network: ECONNREFUSED, ENOTFOUND, timeouts
  return code === '53300' || code.startsWith('08') || code.startsWith('57P');
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** postgres://host:port/database: the URL without user, password or query (options, sslkey paths…). */
export function describePostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.searchParams.get('host') || parsed.hostname || 'localhost';
    return `postgres://${host}:${parsed.port || '5432'}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return 'the PostgreSQL server of DATABASE_URL (the URL does not parse)';
  }
}

/** Why an attempt failed, in a few words: the error code, or pg's timeout said plainly. */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/timeout expired|connection timeout/i.test(message)) return 'no answer';
  return errorCode(error) ?? message.split('\n')[0] ?? 'unknown error';
}

export interface ReachOptions {
  timeoutMs: number;
  /** Told once, at the first failed attempt, while start-up keeps trying. */
  onWaiting?: (reason: string) => void;
}

/**
 * Connects (and disconnects) one client until the server lets it in, for up to `timeoutMs`.
 * Pools opened afterwards find a server that answers.
 */
export async function waitForPostgres(url: string, options: ReachOptions): Promise<void> {
  const { default: pg } = await import('pg');
  const started = performance.now();
  const deadline = started + options.timeoutMs;
  let delay = FIRST_RETRY_MS;
  let last: unknown;
  for (;;) {
    const remaining = deadline - performance.now();
    if (last !== undefined && remaining <= 0) break;
    const attemptMs = Math.max(1, Math.ceil(Math.min(remaining, MAX_ATTEMPT_MS)));
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: attemptMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.end().catch(() => undefined);
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (!retryable(error)) {
        throw new DatabaseUnreachableError(`the database at ${describePostgresUrl(url)} refused the connection: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (last === undefined) options.onWaiting?.(reason(error));
      if (last === undefined || attemptMs >= TELLING_ATTEMPT_MS || reason(error) !== 'no answer') last = error;
    }
    const wait = Math.min(delay, deadline - performance.now());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    delay = Math.min(delay * 2, MAX_RETRY_MS);
  }
  throw new DatabaseUnreachableError(`cannot reach the database at ${describePostgresUrl(url)} (${reason(last)}) after ${formatSeconds(options.timeoutMs)}`);
}

function formatSeconds(ms: number): string {
  return `${Number.isInteger(ms / 1000) ? ms / 1000 : (ms / 1000).toFixed(1)} s`;
}

/**
 * SQLite's folder or file cannot be created or opened (permissions, a file where the folder
 * should be, a read-only disk): waiting would not help, so this fails at once, in one line.
 */
export function sqliteOpenError(dataDir: string, error: unknown): Error {
  const code = errorCode(error);
  if (code === undefined) return error as Error;
  const message = error instanceof Error ? error.message : String(error);
  // fs errors read "EACCES: permission denied, mkdir '/path'": the path is named already.
  const detail = message.startsWith(`${code}:`) ? message.split(',')[0] : `${code}: ${message}`;
  return new DatabaseUnreachableError(`cannot open the SQLite database in ${dataDir} (${detail})`);
}

/** One round trip to the database (GET /readyz): throws as a query would while it is unreachable. */
export async function ping<DB>(kysely: Kysely<DB>): Promise<void> {
  await sql`select 1`.execute(kysely);
}
