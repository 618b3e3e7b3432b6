/**
 * Exact decimals for configuration values (USD prices, exchange rates, percentages): a bigint
 * numerator over a power of ten, so that pricing never touches floating point.
 */
export interface Decimal {
  /** value = units / 10^scale */
  units: bigint;
  scale: number;
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

export function parseDecimal(text: string): Decimal | undefined {
  const match = DECIMAL.exec(text.trim());
  if (!match) return undefined;
  const [, whole = '0', fraction = ''] = match;
  return { units: BigInt(whole + fraction), scale: fraction.length };
}

export function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

/** Integer division rounding towards +infinity, for non-negative operands. */
export function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}
