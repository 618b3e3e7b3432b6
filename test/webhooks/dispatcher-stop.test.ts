import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { enqueueTestEvent } from '../../src/webhooks/outbox.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * WebhookDispatcher.stop(): a message claimed but not yet sent when the dispatcher stops goes
 * back unsent, its attempt uncounted, for another worker to send at once (docs/operations.md
 * "Graceful shutdown").
 */
let fresh: FreshDatabase;
let db: Db;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
});

afterEach(async () => {
  await db.close();
  await fresh.dispose();
});

describe(`WebhookDispatcher.stop (${testEngine})`, () => {
  test('a claimed message not sent yet is given back unsent, its attempt not counted', async () => {
    const { accountId } = await createAccount(db, 'hooks-stop@example.com');
    const now = Date.now();
    // Nothing listens on port 9: a send would be recorded as a failed attempt.
    const endpoint = await createEndpoint(db.kysely, { accountId, mode: 'test' }, { url: 'http://127.0.0.1:9/hooks', events: ['*'], now });
    const messageId = await enqueueTestEvent(db.kysely, endpoint, now);
    const dispatcher = new WebhookDispatcher({
      db,
      logger: pino({ level: 'silent' }),
      policy: { allowLoopback: true },
      timeoutMs: 1_000,
      retryDelaysMs: [1_000],
      disableAfterMs: 86_400_000,
      leaseMarginMs: 1_000,
      publicUrl: () => 'http://127.0.0.1:3000',
    });
    const [claimed] = await dispatcher.claim(8, Date.now());
    expect(claimed?.id).toBe(messageId);
    expect(Number(claimed?.attempts)).toBe(1);

    dispatcher.start();
    await dispatcher.stop();
    // The delivery of the claim made before the stop only now gets going: it sends nothing.
    await dispatcher.deliver(claimed!);

    const row = await db.kysely.selectFrom('webhook_messages').select(['status', 'attempts', 'lease_owner', 'lease_until']).where('id', '=', messageId).executeTakeFirstOrThrow();
    expect({ ...row, attempts: Number(row.attempts) }).toEqual({ status: 'pending', attempts: 0, lease_owner: null, lease_until: null });
    expect(await db.kysely.selectFrom('webhook_attempts').select('id').where('message_id', '=', messageId).execute()).toEqual([]);
    // Another dispatcher can claim it at once.
    const other = new WebhookDispatcher({
      db,
      logger: pino({ level: 'silent' }),
      policy: { allowLoopback: true },
      timeoutMs: 1_000,
      retryDelaysMs: [1_000],
      disableAfterMs: 86_400_000,
      leaseMarginMs: 1_000,
      publicUrl: () => '',
    });
    expect((await other.claim(8, Date.now())).map((m) => m.id)).toEqual([messageId]);
  });
});
