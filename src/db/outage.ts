import type { Logger } from 'pino';

/**
 * How a background loop (fulfilment worker, deposit watcher, webhook dispatcher, live probe,
 * notification listener) lives through a database outage (docs/operations.md "When the
 * database goes away"): it logs once when the outage starts and once when the database
 * answers again, never a line per attempt, and waits between attempts from BACKOFF_FIRST_MS,
 * doubling up to BACKOFF_CAP_MS. The cap is what bounds recovery: once the database is back,
 * every loop's next attempt comes within the cap, well inside the 2 s the service promises.
 */
export const BACKOFF_FIRST_MS = 100;
export const BACKOFF_CAP_MS = 1_000;

/** The wait before attempt `failures + 1` after `failures` failed ones in a row. */
export function backoffMs(failures: number, firstMs = BACKOFF_FIRST_MS, capMs = BACKOFF_CAP_MS): number {
  return Math.min(capMs, firstMs * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

/** What a log line may say of a database error: its code and message, never its connection settings. */
export function errorSummary(error: unknown): { message: string; code?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { message: error.message, ...(code !== undefined && { code: String(code) }) };
}

export class OutageLog {
  private since: number | undefined;
  private failures = 0;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'>,
    /** Who is waiting, in the log lines ("fulfilment worker"). */
    private readonly what: string,
    private readonly isUnavailable: (error: unknown) => boolean,
  ) {}

  /** True while an outage is on (an attempt failed and none succeeded since). */
  get down(): boolean {
    return this.since !== undefined;
  }

  /**
   * An attempt failed. Returns false, and records nothing, when `error` is not the database
   * being unavailable (the caller deals with it as before); otherwise counts it and logs the
   * outage's start once.
   */
  failed(error: unknown): boolean {
    if (!this.isUnavailable(error)) return false;
    this.failures++;
    if (this.since === undefined) {
      this.since = Date.now();
      this.logger.warn({ err: errorSummary(error) }, `${this.what}: the database is unavailable; pausing and retrying until it answers`);
    }
    return true;
  }

  /** An attempt succeeded: ends the outage, if one was on, with one line. */
  succeeded(): void {
    if (this.since === undefined) return;
    this.logger.info({ outage_ms: Date.now() - this.since, attempts: this.failures }, `${this.what}: the database answers again; resuming`);
    this.since = undefined;
    this.failures = 0;
  }

  /** The wait before the next attempt during an outage. */
  get retryInMs(): number {
    return backoffMs(this.failures);
  }
}
