import type { RecipientRefusal } from '../../domain/recipient-refusal.js';

/**
 * What can go wrong talking to Fragment, classified by what the service must do about it
 * (docs/upstreams.md "Fragment: errors"):
 * - `recipient`: the recipient cannot get the product (not found, not a user, cannot receive,
 *   premium already active) → the order fails with the refusal's reason (REFUSAL below),
 *   validate answers 400 recipient_invalid with it in details.reason;
 * - `unavailable`: the upstream cannot sell to us until the operator acts (session expired,
 *   KYC required, no TON wallet connected, access denied, blocked by Cloudflare) → the circuit
 *   breaker opens and live fulfilment pauses;
 * - `transient`: worth retrying (network errors, timeouts, 429, 5xx, bad JSON, price changed,
 *   invoice expired, error texts not listed below) → retry with backoff; many in a row count
 *   as "down".
 */
export type FragmentErrorKind = 'recipient' | 'unavailable' | 'transient';

export type FragmentErrorCode =
  // recipient
  | 'recipient_not_found'
  | 'recipient_not_user'
  | 'recipient_cannot_receive'
  | 'premium_already_active'
  // unavailable
  | 'session_expired'
  | 'kyc_required'
  | 'wallet_not_connected'
  | 'access_denied'
  | 'blocked'
  // transient
  | 'rate_limited'
  | 'network'
  | 'http_error'
  | 'bad_response'
  | 'price_changed'
  | 'expired'
  | 'upstream_error';

const KIND: Record<FragmentErrorCode, FragmentErrorKind> = {
  recipient_not_found: 'recipient',
  recipient_not_user: 'recipient',
  recipient_cannot_receive: 'recipient',
  premium_already_active: 'recipient',
  session_expired: 'unavailable',
  kyc_required: 'unavailable',
  wallet_not_connected: 'unavailable',
  access_denied: 'unavailable',
  blocked: 'unavailable',
  rate_limited: 'transient',
  network: 'transient',
  http_error: 'transient',
  bad_response: 'transient',
  price_changed: 'transient',
  expired: 'transient',
  upstream_error: 'transient',
};

/** The refusal each recipient error stands for (docs/upstreams.md "Fragment: errors"). */
const REFUSAL: Partial<Record<FragmentErrorCode, RecipientRefusal>> = {
  recipient_not_found: 'not_found',
  recipient_not_user: 'not_a_user',
  premium_already_active: 'already_premium',
  recipient_cannot_receive: 'not_eligible',
};

export class FragmentError extends Error {
  readonly kind: FragmentErrorKind;

  constructor(
    readonly code: FragmentErrorCode,
    message: string,
  ) {
    super(message);
    this.kind = KIND[code];
  }

  /** Why the recipient was refused; undefined unless this is a `recipient` error. */
  get refusal(): RecipientRefusal | undefined {
    return REFUSAL[this.code];
  }
}

/**
 * Fragment's `error` texts (HTTP 200 with `{error}`), matched by the substrings every known
 * client uses. HTML entities (`&#39;`) are decoded first. Texts not listed are transient.
 */
const ERROR_TEXTS: [RegExp, FragmentErrorCode][] = [
  [/no telegram users found|not found/i, 'recipient_not_found'],
  [/assigned to a user/i, 'recipient_not_user'],
  [/can't gift|cannot gift|can not gift|can't receive|cannot receive/i, 'recipient_cannot_receive'],
  [/already subscribed|already has premium/i, 'premium_already_active'],
  [/access denied/i, 'access_denied'],
  [/verif|kyc/i, 'kyc_required'],
  [/wallet not connected|connect (a |your )?(ton )?wallet/i, 'wallet_not_connected'],
  // A foreign or outdated page hash (the client re-scrapes once before giving up).
  [/bad request/i, 'session_expired'],
  // get*Link's bare "Unknown error" means the session or the page hash has expired
  // (docs/upstreams.md "Fragment: errors"): re-scraped once, like "Bad request".
  [/^unknown error\.?$/i, 'session_expired'],
  [/session|log ?in|sign ?in|unauthori[sz]ed/i, 'session_expired'],
  [/price (was )?changed/i, 'price_changed'],
  [/expired/i, 'expired'],
];

export function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

export function errorFromText(text: string): FragmentError {
  const plain = decodeEntities(text).trim();
  const code = ERROR_TEXTS.find(([pattern]) => pattern.test(plain))?.[1] ?? 'upstream_error';
  // Fragment's own sentence is safe to repeat (it never contains our cookies).
  return new FragmentError(code, `Fragment: ${plain.slice(0, 300) || 'error'}`);
}
