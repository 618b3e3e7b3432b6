import { randomBytes } from 'node:crypto';
import type { Insertable } from 'kysely';
import { generate } from 'otplib';
import { expect } from 'vitest';
import type { OperatorRole } from '../../src/db/schema.js';
import type { DepositsTable } from '../../src/db/tables/deposits.js';
import { createOperator } from '../../src/operator/operators.js';
import type { Harness } from './harness.js';
import { PASSWORD, WebClient } from './web.js';

/**
 * The operator console in the HTTP suites: a WebClient (cookie jar, forms, CSRF, the security
 * headers checked on every answer) over the console's own server, and a signed-in operator of
 * either role, through the real link, password and two-factor enrolment.
 */
export function consoleClient(h: Harness, ip = '127.0.0.1'): WebClient {
  const app = h.service.console?.app;
  if (!app) throw new Error('the harness runs without the console: start it with OPERATOR_PORT');
  return new WebClient({ inject: app.inject.bind(app) } as unknown as Harness, ip);
}

/** A TOTP code for `secret`, `offset` 30-second steps from now (a code works once: step-ups take a later one). */
export function totpCode(secret: string, offset = 0): Promise<string> {
  return generate({ secret, epoch: Math.floor(Date.now() / 1000) + offset * 30 });
}

let counter = 0;
export const operatorEmail = (role: string) => `${role}-${process.pid}-${Date.now()}-${++counter}@ops.example.com`;

export interface SignedInOperator {
  client: WebClient;
  email: string;
  operatorId: string;
  secret: string;
}

/** A new operator who set their password through the link and enrolled two-factor: signed in. */
export async function signedInOperator(h: Harness, role: OperatorRole, ip = '127.0.0.1'): Promise<SignedInOperator> {
  const email = operatorEmail(role);
  const link = await createOperator(h.service.db, { email, role, actor: 'test' });
  const client = consoleClient(h, ip);
  const form = await client.get(`/set-password?token=${link.token}`);
  expect(form.status, form.body.slice(0, 300)).toBe(200);
  const set = await client.post('/set-password', { token: link.token, password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string });
  expect(set.location).toBe('/enrol');
  const enrol = await client.get('/enrol');
  const secret = /data-testid="totp-secret">([^<]+)</.exec(enrol.body)?.[1] as string;
  expect(secret).toBeTruthy();
  const done = await client.post('/enrol', { code: await totpCode(secret), _csrf: enrol.csrf as string });
  expect(done.location).toBe('/');
  return { client, email, operatorId: link.operator.id, secret };
}

let deposits = 0;
/** A deposit as the watcher records one: unmatched with no comment unless `row` says otherwise; its id and transaction hash. */
export async function seedDeposit(h: Harness, row: Partial<Insertable<DepositsTable>> & { amount: bigint }): Promise<{ id: string; txHash: string }> {
  const now = Date.now();
  const id = `dep_console${process.pid}x${++deposits}`;
  const txHash = randomBytes(32).toString('hex');
  await h.service.db.kysely
    .insertInto('deposits')
    .values({
      id,
      tx_hash: txHash,
      lt: now * 1000 + deposits,
      address: 'deposit-wallet',
      sender: 'EQsender',
      comment: null,
      status: 'unmatched',
      reason: 'no_comment',
      account_id: null,
      chain_time: now,
      created_at: now,
      credited_at: null,
      credited_by: null,
      ...row,
    })
    .execute();
  return { id, txHash };
}
