/**
 * TON amounts. Money is a bigint count of nanotons everywhere inside the service; the decimal
 * string of the wire format ("12.5", "0.000000001", "0") exists only at the edges.
 */
export const NANOTONS_PER_TON = 1_000_000_000n;
const FRACTION_DIGITS = 9;

const UNSIGNED_DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export class MoneyFormatError extends Error {}

/**
 * Parses a TON decimal string into nanotons. Accepts at most 9 fractional digits and no
 * exponent; a leading "-" only when `allowNegative` (operator adjustments).
 */
export function parseTon(text: string, options: { allowNegative?: boolean } = {}): bigint {
  const negative = text.startsWith('-');
  if (negative && !options.allowNegative) throw new MoneyFormatError(`amount must not be negative: ${text}`);
  const match = UNSIGNED_DECIMAL.exec(negative ? text.slice(1) : text);
  if (!match) throw new MoneyFormatError(`not a decimal TON amount: "${text}"`);
  const [, whole = '0', fraction = ''] = match;
  if (fraction.length > FRACTION_DIGITS) {
    throw new MoneyFormatError(`at most ${FRACTION_DIGITS} decimal places (1 nanoton): "${text}"`);
  }
  const nanotons = BigInt(whole) * NANOTONS_PER_TON + BigInt(fraction.padEnd(FRACTION_DIGITS, '0'));
  return negative ? -nanotons : nanotons;
}

/** Formats nanotons as the wire's decimal string, trailing fractional zeros trimmed. */
export function formatTon(nanotons: bigint): string {
  const sign = nanotons < 0n ? '-' : '';
  const abs = nanotons < 0n ? -nanotons : nanotons;
  const whole = abs / NANOTONS_PER_TON;
  const fraction = (abs % NANOTONS_PER_TON).toString().padStart(FRACTION_DIGITS, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The `{value, currency}` object of the wire format. */
export function tonAmount(nanotons: bigint): { value: string; currency: 'TON' } {
  return { value: formatTon(nanotons), currency: 'TON' };
}
