import { type Decimal, pow10 } from './decimal.js';
import { NANOTONS_PER_TON } from './money.js';

/**
 * USDT on TON (a jetton with 6 decimals) as the service handles it (docs/operations.md "USDT
 * top-ups"): a bigint count of its smallest unit inside, a decimal string at the edges, and the
 * conversion to nanotons for the live balance. USDT is taken at 1 USD.
 */
const USDT_DECIMALS = 6;
export const USDT_UNITS = 1_000_000n;
/** The mainnet USDT jetton master (Tether's, announced on ton.org). */
export const MAINNET_USDT_MASTER = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs';

export class UsdtFormatError extends Error {}

/** "25", "0.5", "1.000001" → units; at most 6 decimals, no sign, no exponent. */
export function parseUsdt(text: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new UsdtFormatError(`not a decimal USDT amount: "${text}"`);
  const [, whole = '0', fraction = ''] = match;
  if (fraction.length > USDT_DECIMALS) throw new UsdtFormatError(`at most ${USDT_DECIMALS} decimal places: "${text}"`);
  return BigInt(whole) * USDT_UNITS + BigInt(fraction.padEnd(USDT_DECIMALS, '0'));
}

export function formatUsdt(units: bigint): string {
  const whole = units / USDT_UNITS;
  const fraction = (units % USDT_UNITS).toString().padStart(USDT_DECIMALS, '0').replace(/0+$/, '');
  return `${whole}${fraction ? `.${fraction}` : ''}`;
}

/** An exact decimal as text ("2.87"), trailing fractional zeros trimmed. */
export function formatDecimal(value: Decimal): string {
  if (value.scale === 0) return value.units.toString();
  const digits = value.units.toString().padStart(value.scale + 1, '0');
  const whole = digits.slice(0, -value.scale);
  const fraction = digits.slice(-value.scale).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * nanotons = USDT ÷ (USD per TON) × (1 − spread/100), rounded down to the nanoton: one
 * fraction of bigints, so the only rounding is the final floor (the client never gets more
 * than the rate allows).
 */
export function usdtToNanotons(usdtUnits: bigint, tonUsdRate: Decimal, spreadPercent: Decimal): bigint {
  if (tonUsdRate.units <= 0n) throw new RangeError('TON/USD rate must be positive');
  if (usdtUnits < 0n) throw new RangeError('USDT amount must not be negative');
  const keep = 100n * pow10(spreadPercent.scale) - spreadPercent.units;
  if (keep < 0n) throw new RangeError('spread must be at most 100 %');
  const numerator = usdtUnits * NANOTONS_PER_TON * pow10(tonUsdRate.scale) * keep;
  const denominator = USDT_UNITS * tonUsdRate.units * 100n * pow10(spreadPercent.scale);
  return numerator / denominator;
}
