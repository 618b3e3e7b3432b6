import { describe, expect, it } from 'vitest';
import { backoffMs, OutageLog } from '../../src/db/outage.js';
import { postgresEngine, QueryTimeoutError } from '../../src/db/postgres.js';
import { sqliteEngine } from '../../src/db/sqlite.js';
import { toApiError } from '../../src/http/errors.js';

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
  ])('%s', (_name, error) => {
    expect(postgresEngine.isUnavailable(error)).toBe(true);
    expect(toApiError(error, postgresEngine)).toMatchObject({ code: 'service_unavailable', status: 503 });
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

  it('a bug stays a 500, and without the engine a connection error is one too', () => {
    expect(toApiError(new TypeError('boom'), postgresEngine).code).toBe('internal_error');
    expect(toApiError(withCode('57P01'), sqliteEngine).code).toBe('internal_error');
  });
});

describe('background loops during an outage', () => {
  it('back off from 100 ms, doubling, to at most 1 s', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map((n) => backoffMs(n))).toEqual([100, 200, 400, 800, 1000, 1000, 1000]);
  });

  it('log once when an outage starts and once when it ends, however many attempts fail', () => {
    const lines: string[] = [];
    const logger = { warn: (_: object, msg: string) => void lines.push(`warn ${msg}`), info: (_: object, msg: string) => void lines.push(`info ${msg}`) };
    const outage = new OutageLog(logger as never, 'worker', (error) => postgresEngine.isUnavailable(error));
    expect(outage.failed(new TypeError('a bug'))).toBe(false);
    expect(outage.down).toBe(false);
    for (let i = 0; i < 20; i++) expect(outage.failed(withCode('ECONNREFUSED'))).toBe(true);
    expect(outage.down).toBe(true);
    expect(outage.retryInMs).toBe(1000);
    outage.succeeded();
    outage.succeeded();
    expect(outage.down).toBe(false);
    expect(lines).toEqual(['warn worker: the database is unavailable; pausing and retrying until it answers', 'info worker: the database answers again; resuming']);
    outage.failed(withCode('57P01'));
    expect(outage.retryInMs).toBe(100);
  });
});
