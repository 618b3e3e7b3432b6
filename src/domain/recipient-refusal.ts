import { ApiError } from './api-error.js';
import type { Product } from './products.js';

/**
 * Why a recipient cannot receive a product (docs/api.md "Recipient refusals"): the
 * `details.reason` of a `400 recipient_invalid`, and the `failure_reason` of an order the
 * upstream refused for that recipient.
 * - `not_found`: no Telegram account has this username (a malformed username too: no account
 *   can have it);
 * - `not_a_user`: the username belongs to a bot, a channel or a group;
 * - `already_premium`: the account has Telegram Premium and cannot be gifted it now;
 * - `not_eligible`: the account exists but cannot receive the product right now.
 */
export const RECIPIENT_REFUSALS = ['not_found', 'not_a_user', 'already_premium', 'not_eligible'] as const;
export type RecipientRefusal = (typeof RECIPIENT_REFUSALS)[number];

const PRODUCT_NAMES: Record<Product, string> = { stars: 'Telegram Stars', premium: 'Telegram Premium' };

/** A sentence a person can act on: what is wrong and what to do instead. `username` without "@". */
export function refusalMessage(reason: RecipientRefusal, username: string, product: Product): string {
  switch (reason) {
    case 'not_found':
      return `No Telegram account @${username} exists. Check the spelling of the username.`;
    case 'not_a_user':
      return `@${username} is a bot, channel or group, not a person's account. Use the username of a Telegram user.`;
    case 'already_premium':
      return `@${username} already has Telegram Premium and cannot be gifted it now. Send Telegram Stars instead, or try again once the subscription has ended.`;
    case 'not_eligible':
      return `@${username} cannot receive ${PRODUCT_NAMES[product]} right now (Telegram does not allow it for this account). Choose another recipient or try again later.`;
  }
}

/** The `400 recipient_invalid` for a refused recipient, its reason in `details.reason`. */
export function recipientRefused(reason: RecipientRefusal, username: string, product: Product): ApiError {
  return new ApiError('recipient_invalid', refusalMessage(reason, username, product), 'recipient', { reason });
}
