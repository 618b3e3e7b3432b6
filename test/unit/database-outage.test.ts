import { describe, expect, it } from 'vitest';
import { postgresEngine, QueryTimeoutError } from '../../src/db/postgres.js';
import { sqliteEngine } from '../../src/db/sqlite.js';
import { unavailableError } from '../../src/http/errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('PostgreSQL: which errors mean the database is unavailable (503), and which do not', () => {
  it.each([
    ['pg_terminate_backend (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['a crashed server (57P02)', withCode('57P02')],
    ['a server starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET', 'read ECONNRESET')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    ['no new connection in time', new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') })],
    ['a client that lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['a statement past the query timeout', new QueryTimeoutError(2000)],
    ['a refusal from every address of a name', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['a full disk on the server (53100)', withCode('53100')],
    ["Kysely's discarded connection", new Error('Postgres connection has been discarded')],
  ])('%s', (_name, error) => {
    expect(postgresEngine.isUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a lock timeout (its own answer: 409)', withCode('55P03')],
    ['a syntax error', withCode('42601')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    ['a non-error', 'Connection terminated'],
  ])('not %s', (_name, error) => {
    expect(postgresEngine.isUnavailable(error)).toBe(false);
  });

  it("is PostgreSQL's own: SQLite does not take a server's codes for its own", () => {
    expect(sqliteEngine.isUnavailable(withCode('57P01'))).toBe(false);
    expect(sqliteEngine.isUnavailable(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(unavailableError()).toMatchObject({ code: 'service_unavailable', status: 503 });
  });
});
