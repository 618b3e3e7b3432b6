/**
 * Per-key rate limit (docs/api.md "Rate limits"): a token bucket refilled at `rps` tokens per
 * second up to `burst`. State lives in this process: each API node limits on its own.
 * Headers follow draft-ietf-httpapi-ratelimit-headers: the policy's quota is the burst and its
 * window the time an empty bucket takes to refill.
 */
export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_BUCKETS = 100_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly policy: string;

  constructor(
    private readonly rps: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.policy = `"default";q=${burst};w=${Math.max(1, Math.ceil(burst / rps))}`;
  }

  take(key: string): RateLimitDecision {
    const now = this.now();
    const bucket = this.refill(key, now);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const secondsToFull = Math.ceil((this.burst - bucket.tokens) / this.rps);
    const headers: Record<string, string> = {
      'RateLimit-Policy': this.policy,
      RateLimit: `"default";r=${Math.floor(bucket.tokens)};t=${secondsToFull}`,
    };
    if (!allowed) headers['Retry-After'] = String(Math.max(1, Math.ceil((1 - bucket.tokens) / this.rps)));
    return { allowed, headers };
  }

  private refill(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      // Bound memory: forget the oldest buckets (they would be full again by now anyway).
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value as string);
      bucket = { tokens: this.burst, updatedAt: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.rps);
    bucket.updatedAt = now;
    return bucket;
  }
}
