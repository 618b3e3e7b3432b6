import { ApiError } from '../domain/api-error.js';

/**
 * Makes a request wait for an earlier in-flight request with the same idempotency key in this
 * process (docs/api.md "Idempotency": the later waits up to 10 s, then 409 idempotency_key_in_use).
 * Across processes the unique index on the key does the same job: the loser re-reads.
 */
export const IDEMPOTENCY_WAIT_MS = 10_000;

export function keyInUse(): ApiError {
  return new ApiError('idempotency_key_in_use');
}

export class IdempotencyGate {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(private readonly waitLimitMs = IDEMPOTENCY_WAIT_MS) {}

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const earlier = this.inFlight.get(key);
    if (earlier && !(await settlesWithin(earlier, this.waitLimitMs))) throw keyInUse();
    const mine = work();
    this.inFlight.set(key, mine);
    try {
      return await mine;
    } finally {
      if (this.inFlight.get(key) === mine) this.inFlight.delete(key);
    }
  }
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
