// @ts-check
/**
 * Buys 50 test Stars end to end with the Starport SDK.
 *
 *   npm install && npm run build          # once, in this repository
 *   STARPORT_API_KEY=sk_test_… STARPORT_BASE_URL=http://127.0.0.1:3000/api/v1 node examples/first-order.mjs [@recipient]
 *
 * Try @test_failed as the recipient to see a failure, or @test_invalid to see a refused check.
 * In your own project: `npm install @starport/sdk` and the same code.
 */
import { randomUUID } from 'node:crypto';
import { InsufficientBalanceError, RecipientInvalidError, Starport, StarportError } from '@starport/sdk';

const apiKey = process.env.STARPORT_API_KEY;
const baseUrl = process.env.STARPORT_BASE_URL ?? 'http://127.0.0.1:3000/api/v1';
const recipient = process.argv[2] ?? '@durov';

if (!apiKey?.startsWith('sk_test_')) {
  console.error('Set STARPORT_API_KEY to a test key (sk_test_…): this example buys test Stars.');
  process.exit(2);
}

const starport = new Starport({ apiKey, baseUrl });

try {
  const { balance } = await starport.getBalance();
  console.log(`Test balance: ${balance.value} TON available, ${balance.reserved} TON reserved`);

  const { recipient: checked } = await starport.validateRecipient({ product: 'stars', recipient, quantity: 50 });
  console.log(`Recipient @${checked.username} (${checked.display_name}) can receive Stars`);

  const quote = await starport.getQuote({ product: 'stars', quantity: 50 });
  console.log(`50 Stars cost ${quote.amount.value} ${quote.amount.currency} right now`);

  // One Idempotency-Key per order. Store it with your own order before sending: sending the same
  // key again (after a crash or a timeout) returns the same order instead of buying twice.
  const idempotencyKey = `first-order-${randomUUID()}`;
  const order = await starport.createOrder({ product: 'stars', recipient, quantity: 50, external_id: 'first-order' }, { idempotencyKey });
  console.log(`Created ${order.id}: ${order.status}, ${order.amount.value} TON reserved`);

  // Test orders settle in about 2 s; waitForOrder polls every 0.5 s with a test key (5 s with a live key).
  const final = await starport.waitForOrder(order.id, { timeout: 60_000, onPoll: (o) => console.log(`  … ${o.status}`) });
  console.log(`Order ${final.id} is ${final.status}${final.failure_reason ? ` (${final.failure_reason})` : ''}`);
  for (const event of final.events) console.log(`  ${event.created_at}  ${event.type}`);

  const after = await starport.getBalance();
  console.log(`Test balance now: ${after.balance.value} TON available, ${after.balance.reserved} TON reserved`);
  process.exitCode = final.status === 'delivered' ? 0 : 1;
} catch (error) {
  if (error instanceof InsufficientBalanceError) {
    console.error(`Not enough test balance: ${error.available} TON available, ${error.required} TON needed. Credit the test balance first.`);
  } else if (error instanceof RecipientInvalidError) {
    console.error(`${recipient} cannot receive Stars (${error.reason ?? 'no reason given'}): ${error.message}`);
  } else if (error instanceof StarportError) {
    console.error(`Starport error ${error.status ?? ''} ${error.code}: ${error.message} (request ${error.requestId ?? 'n/a'})`);
  } else {
    throw error;
  }
  process.exitCode = 1;
}
