import type { Product } from '../../domain/products.js';
import type { RecipientRefusal } from '../../domain/recipient-refusal.js';
import { normalizeUsername } from '../../domain/username.js';
import type { RecipientDirectory, RecipientLookup } from '../ports.js';

/**
 * Test mode's magic recipients (docs/api.md "Test mode"). Everything else exists and is eligible,
 * its display name being the username itself. Test mode never touches the outside world.
 */
export type TestOutcome = 'delivered' | 'recipient_invalid' | 'upstream_error' | 'slow' | { refused: RecipientRefusal };

/** `@test_<reason>` is refused for that reason, as the live upstream would refuse it. */
const REFUSED: Record<string, RecipientRefusal> = {
  test_not_found: 'not_found',
  test_not_a_user: 'not_a_user',
  test_already_premium: 'already_premium',
  test_not_eligible: 'not_eligible',
};

export function testOutcome(username: string, product: Product): TestOutcome {
  const name = normalizeUsername(username);
  switch (name) {
    case 'test_invalid':
      return 'recipient_invalid';
    case 'test_failed':
      return 'upstream_error';
    case 'test_slow':
      return 'slow';
  }
  const reason = REFUSED[name];
  // Premium already active stops a Premium gift only; stars still reach the account.
  if (reason && !(reason === 'already_premium' && product !== 'premium')) return { refused: reason };
  return 'delivered';
}

export const testRecipientDirectory: RecipientDirectory = {
  async lookup(username: string, product: Product): Promise<RecipientLookup> {
    const outcome = testOutcome(username, product);
    // @test_invalid does not exist (docs/api.md "Test mode").
    if (outcome === 'recipient_invalid') return { eligible: false, username, reason: 'not_found' };
    if (typeof outcome === 'object') return { eligible: false, username, reason: outcome.refused };
    return { eligible: true, username, displayName: username };
  },
};
