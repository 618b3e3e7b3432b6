import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0023-operator-console on a database with audit rows: the rows written before keep
 * their values with no console person or address; the console's tables take operators, refuse
 * a second operator with the same e-mail and a role other than admin or support.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('audit rows are kept without a console person; operators are unique by e-mail with a known role', async () => {
  await migrateUpTo(db, engine, '0022-self-service');
  await db
    .insertInto('audit_log')
    .values({
      id: 'aud_old',
      created_at: 5,
      actor: 'alice',
      source: 'cli',
      action: 'balance.credit',
      account_id: 'acct_a',
      mode: 'live',
      order_id: null,
      reason: 'refund',
      details: '{"amount":"1"}',
    })
    .execute();

  await migrateToLatest(db, engine);

  const old = await db.selectFrom('audit_log').selectAll().where('id', '=', 'aud_old').executeTakeFirstOrThrow();
  expect({ actor: old.actor, reason: old.reason, details: old.details, operator_id: old.operator_id, ip: old.ip }).toEqual({
    actor: 'alice',
    reason: 'refund',
    details: '{"amount":"1"}',
    operator_id: null,
    ip: null,
  });

  const operator = (id: string, email: string, role: string) => ({ id, email, role, password_hash: null, totp_secret: null, created_at: 1, updated_at: 1 });
  await db
    .insertInto('operators')
    .values(operator('opr_a', 'ops@example.com', 'admin'))
    .execute();
  await expect(
    db
      .insertInto('operators')
      .values(operator('opr_b', 'ops@example.com', 'support'))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('operators')
      .values(operator('opr_c', 'other@example.com', 'owner'))
      .execute(),
  ).rejects.toThrow();
  await db.insertInto('operator_sessions').values({ id_hash: 'h', operator_id: 'opr_a', stage: 'enrol', created_at: 1, last_seen_at: 1, expires_at: 2 }).execute();
  await expect(
    db.insertInto('operator_sessions').values({ id_hash: 'h2', operator_id: 'opr_a', stage: 'half', created_at: 1, last_seen_at: 1, expires_at: 2 }).execute(),
  ).rejects.toThrow();
  await db
    .insertInto('audit_log')
    .values({ id: 'aud_new', created_at: 6, actor: 'ops@example.com', source: 'console', action: 'balance.credit', details: '{}', operator_id: 'opr_a', ip: '10.0.0.1' })
    .execute();
  const rows = await db.selectFrom('audit_log').select(['id', 'operator_id', 'ip']).orderBy('id').execute();
  expect(rows).toEqual([
    { id: 'aud_new', operator_id: 'opr_a', ip: '10.0.0.1' },
    { id: 'aud_old', operator_id: null, ip: null },
  ]);
});
