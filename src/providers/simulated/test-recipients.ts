import { normalizeUsername } from '../../domain/username.js';
import type { RecipientDirectory, RecipientLookup } from '../ports.js';

/**
 * Test mode's magic recipients (docs/api.md "Test mode"). Everything else exists and is eligible,
 * its display name being the username itself. Test mode never touches the outside world.
 */
export type TestOutcome = 'delivered' | 'recipient_invalid' | 'upstream_error' | 'slow';

export function testOutcome(username: string): TestOutcome {
  switch (normalizeUsername(username)) {
    case 'test_invalid':
      return 'recipient_invalid';
    case 'test_failed':
      return 'upstream_error';
    case 'test_slow':
      return 'slow';
    default:
      return 'delivered';
  }
}

export const testRecipientDirectory: RecipientDirectory = {
  async lookup(username: string): Promise<RecipientLookup | undefined> {
    if (testOutcome(username) === 'recipient_invalid') return undefined;
    return { username, displayName: username, eligible: true };
  },
};
