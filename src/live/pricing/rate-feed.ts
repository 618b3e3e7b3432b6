import type { Decimal } from '../../domain/decimal.js';
import { parseDecimal } from '../../domain/decimal.js';
import { PriceUnavailableError, type RateFeed } from '../../providers/ports.js';
import type { LiveConfig } from '../config.js';

/**
 * TON/USD from an HTTP rate feed (RATE_FEED): tonapi's `/v2/rates?tokens=ton&currencies=usd`
 * (`{"rates":{"TON":{"prices":{"USD":2.87}}}}`) or CoinGecko's `simple/price`
 * (`{"the-open-network":{"usd":2.87,"last_updated_at":1761234567}}`). A rate is reused for
 * RATE_REFRESH_SECONDS; when refreshing fails the last rate is served until it is
 * RATE_MAX_AGE_SECONDS old, then every price answers 503 price_unavailable. Per process:
 * each node asks the feed itself.
 */
const DEFAULT_FEED_URLS = {
  tonapi: 'https://tonapi.io/v2/rates?tokens=ton&currencies=usd',
  coingecko: 'https://api.coingecko.com/api/v3/simple/price?ids=the-open-network&vs_currencies=usd&include_last_updated_at=true',
} as const;

/** The RATE_FEED the configuration names (src/live/config.ts); `fixed` is TON_USD_RATE. */
export function configuredRateFeed(pricing: LiveConfig['pricing'], fixed: RateFeed): RateFeed {
  return pricing.rateFeed === 'fixed'
    ? fixed
    : new HttpRateFeed({
        kind: pricing.rateFeed,
        url: pricing.rateFeedUrl ?? DEFAULT_FEED_URLS[pricing.rateFeed],
        refreshMs: pricing.refreshSeconds * 1000,
        maxAgeMs: pricing.maxAgeSeconds * 1000,
      });
}

export interface HttpRateFeedOptions {
  kind: 'tonapi' | 'coingecko';
  url: string;
  refreshMs: number;
  maxAgeMs: number;
  timeoutMs?: number;
  now?: () => number;
}

export class HttpRateFeed implements RateFeed {
  private last: { rate: Decimal; asOf: number; fetchedAt: number } | undefined;
  private inflight: Promise<void> | undefined;

  constructor(private readonly options: HttpRateFeedOptions) {}

  async tonUsdRate(): Promise<Decimal> {
    return (await this.tonUsdRateAt()).rate;
  }

  async tonUsdRateAt(): Promise<{ rate: Decimal; asOf: number }> {
    const now = (this.options.now ?? Date.now)();
    if (!this.last || now - this.last.fetchedAt >= this.options.refreshMs) {
      // One refresh at a time; concurrent callers share it.
      this.inflight ??= this.refresh().finally(() => {
        this.inflight = undefined;
      });
      await this.inflight.catch(() => undefined);
    }
    const last = this.last;
    if (!last || (this.options.now ?? Date.now)() - last.asOf > this.options.maxAgeMs) {
      throw new PriceUnavailableError('no fresh TON/USD rate');
    }
    return { rate: last.rate, asOf: last.asOf };
  }

  private async refresh(): Promise<void> {
    const fetchedAt = (this.options.now ?? Date.now)();
    const response = await fetch(this.options.url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000) });
    if (!response.ok) throw new Error(`rate feed answered HTTP ${response.status}`);
    const body = (await response.json()) as { rates?: { TON?: { prices?: { USD?: unknown } } }; 'the-open-network'?: { usd?: unknown; last_updated_at?: unknown } } | null;
    const { value, updatedAt } =
      this.options.kind === 'tonapi'
        ? { value: body?.rates?.TON?.prices?.USD, updatedAt: undefined }
        : { value: body?.['the-open-network']?.usd, updatedAt: body?.['the-open-network']?.last_updated_at };
    const rate = decimalFromJson(value);
    if (!rate || rate.units === 0n) throw new Error('rate feed answered without a usable TON/USD rate');
    // The feed's own timestamp, when it gives one, bounds the age: a feed serving a frozen rate is stale too.
    const asOf = typeof updatedAt === 'number' && Number.isFinite(updatedAt) ? Math.min(fetchedAt, updatedAt * 1000) : fetchedAt;
    this.last = { rate, asOf, fetchedAt };
  }
}

/**
 * A JSON number (or numeric string) as an exact decimal. JavaScript prints a parsed number in
 * its shortest round-trip form, which is the feed's own digits for any rate it can send;
 * exponent forms (1e-7) are expanded without floating-point arithmetic.
 */
export function decimalFromJson(value: unknown): Decimal | undefined {
  if (typeof value === 'string') return parseDecimal(value);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  const text = String(value);
  const match = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return parseDecimal(text);
  const digits = `${match[1]}${match[2] ?? ''}`;
  const exponent = Number(match[3]) - (match[2]?.length ?? 0);
  return exponent >= 0 ? { units: BigInt(digits) * 10n ** BigInt(exponent), scale: 0 } : { units: BigInt(digits), scale: -exponent };
}
