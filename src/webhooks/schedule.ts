/**
 * When a failed message is tried again: after attempt n fails, wait DELAYS[n-1] ± 10 % jitter
 * (so that many messages failing together do not retry in lock-step). The default follows the
 * Standard Webhooks example schedule: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h and 24 h — 10 attempts over about 3 days and 3 hours. After the last, the message
 * is `failed` (it can still be redelivered by hand).
 */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000];

/** A receiver's Retry-After is honoured up to this long (it cannot stretch the schedule further). */
const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * The delay before the attempt after `attempt` (1-based), or undefined when none is left. A
 * Retry-After from a 429 or 503 answer lengthens (never shortens) the wait, up to 24 h.
 */
export function retryDelay(delays: readonly number[], attempt: number, random: () => number = Math.random, retryAfterMs?: number): number | undefined {
  const base = delays[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}
