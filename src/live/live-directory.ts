import { normalizeUsername } from '../domain/username.js';
import type { Product } from '../domain/products.js';
import { type RecipientDirectory, type RecipientLookup, UpstreamUnavailableError } from '../providers/ports.js';
import type { CircuitBreaker } from './breaker.js';
import type { FragmentClient } from './fragment/client.js';
import { FragmentError } from './fragment/errors.js';

/**
 * Live recipient checks (POST /recipients/validate with a live key) asked of Fragment: stars →
 * searchStarsRecipient; premium → searchPremiumGiftRecipient, then init for that period,
 * because only init tells "already subscribed" (docs/upstreams.md "Fragment: errors"). Fragment's
 * refusals become their reasons (FragmentError.refusal). Answers are cached for
 * LIVE_VALIDATE_CACHE_SECONDS (found and refused alike; upstream failures never).
 * While the breaker is open, or without a session, the upstream is not asked at all.
 */
export interface LiveDirectoryOptions {
  client: FragmentClient;
  breaker: CircuitBreaker;
  /** Whether a Fragment session is configured at all (unconfigured is not an upstream failure). */
  configured: () => Promise<boolean>;
  cacheMs: number;
  now?: () => number;
}

const MAX_CACHE_ENTRIES = 10_000;

export class LiveRecipientDirectory implements RecipientDirectory {
  private cache = new Map<string, { value: RecipientLookup; until: number }>();

  constructor(private readonly options: LiveDirectoryOptions) {}

  async lookup(username: string, product: Product, quantity: number): Promise<RecipientLookup> {
    const now = (this.options.now ?? Date.now)();
    const key = `${product}:${product === 'premium' ? quantity : ''}:${normalizeUsername(username)}`;
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return { ...cached.value, username };
    if (!(await this.options.configured())) throw new UpstreamUnavailableError('no Fragment session is configured');
    if (await this.options.breaker.isOpen()) throw new UpstreamUnavailableError('live fulfilment is paused');
    const value = await this.ask(username, product, quantity);
    if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
    if (this.options.cacheMs > 0) this.cache.set(key, { value, until: now + this.options.cacheMs });
    return value;
  }

  private async ask(username: string, product: Product, quantity: number): Promise<RecipientLookup> {
    const { client, breaker } = this.options;
    try {
      const found = await client.searchRecipient(product, username, quantity);
      if (product === 'premium') await client.initBuy('premium', found.token, quantity);
      await breaker.recordSuccess();
      return { username, displayName: found.name, eligible: true };
    } catch (error) {
      if (!(error instanceof FragmentError)) throw error;
      const reason = error.refusal;
      if (reason) {
        await breaker.recordSuccess();
        return { eligible: false, username, reason };
      }
      if (error.kind === 'unavailable') await breaker.open(error.code, error.message);
      else await breaker.recordTransient(error.message);
      throw new UpstreamUnavailableError(error.message);
    }
  }
}
