import { ApiError } from '../domain/api-error.js';
import type { Product } from '../domain/products.js';
import { recipientRefused } from '../domain/recipient-refusal.js';
import { type RecipientDirectory, type RecipientLookup, UpstreamUnavailableError } from './ports.js';

/**
 * POST /recipients/validate's check (docs/api.md "POST /recipients/validate"): the account when
 * it can receive the product; otherwise `400 recipient_invalid` with the refusal in
 * `details.reason`. An upstream that cannot answer is `503 live_unavailable` (nothing is written).
 */
export async function checkRecipient(directory: RecipientDirectory, username: string, product: Product, quantity: number) {
  let found: RecipientLookup;
  try {
    found = await directory.lookup(username, product, quantity);
  } catch (error) {
    if (error instanceof UpstreamUnavailableError) throw liveChecksUnavailable();
    throw error;
  }
  if (!found.eligible) throw recipientRefused(found.reason, username, product);
  return found;
}

export function liveChecksUnavailable(): ApiError {
  return new ApiError('live_unavailable', 'Live recipient checks are not available right now. Retry later.');
}
