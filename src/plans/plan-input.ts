import { type PlanKind, type PlanTier, parseMarkupPercent, parsePremiumUsd, parseStarUsd, parseTierSpec } from '../domain/price-plan.js';
import { PREMIUM_MONTHS } from '../domain/products.js';

/** The plan's fields as the operator typed them (`starport plan create`'s options, the console's form). */
export interface PlanInput {
  markup?: string;
  star?: string;
  premium3?: string;
  premium6?: string;
  premium12?: string;
  /** Each `VOLUME:KEY=VALUE[,…]`, as `--tier` takes it. */
  tiers: string[];
}

/** The input names a plan of neither kind, or of both, or leaves a Premium price out. */
export class PlanInputError extends Error {}

/**
 * The base tier (volume 0) from the markup or the four USD prices, then each further tier: one
 * reading for the CLI and the operator console. A value out of bounds is a PlanError naming it.
 */
export function planTiers(
  input: PlanInput,
  names: { markup: string; markupWithValue: string; star: string; premium: (months: number) => string },
): { kind: PlanKind; tiers: PlanTier[] } {
  const prices = (last: string) => `${[names.star, ...PREMIUM_MONTHS.slice(0, -1).map(names.premium)].join(', ')}${last}${names.premium(12)}`;
  const premium = PREMIUM_MONTHS.map((months) => input[`premium${months}`]);
  const pricesGiven = input.star !== undefined || premium.some((p) => p !== undefined);
  if (input.markup !== undefined && pricesGiven) throw new PlanInputError(`a plan is either ${names.markup} or prices (${prices(', ')}), not both`);
  let base: PlanTier;
  let kind: PlanKind;
  if (input.markup !== undefined) {
    kind = 'markup';
    base = { fromNanotons: 0n, markupPercent: parseMarkupPercent(input.markup, names.markup) };
  } else if (pricesGiven) {
    kind = 'prices';
    const [p3, p6, p12] = premium;
    if (input.star === undefined || p3 === undefined || p6 === undefined || p12 === undefined) {
      throw new PlanInputError(`a prices plan needs ${prices(' and ')}`);
    }
    base = {
      fromNanotons: 0n,
      prices: {
        starUsd: parseStarUsd(input.star, names.star),
        premiumUsd: { 3: parsePremiumUsd(p3, 3, names.premium(3)), 6: parsePremiumUsd(p6, 6, names.premium(6)), 12: parsePremiumUsd(p12, 12, names.premium(12)) },
      },
    };
  } else throw new PlanInputError(`a plan needs ${names.markupWithValue}, or ${prices(' and ')} (USD)`);
  const tiers = [base];
  for (const spec of input.tiers) tiers.push(parseTierSpec(kind, spec, tiers[tiers.length - 1]));
  return { kind, tiers };
}
