/** A pino logger, or Fastify's request logger. */
interface Logger {
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** The first wait after a failure of an unavailable database; each further one doubles it. */
const FIRST_BACKOFF_MS = 100;
/** The longest wait: a database back (space freed) is noticed within this. */
const MAX_BACKOFF_MS = 1_000;
/** While the outage lasts, it is logged again at most this often (with the failures since). */
const LOG_EVERY_MS = 60_000;
/** A failure this long after the last one starts a new outage (for callers that never see successes). */
const NEW_OUTAGE_AFTER_MS = 10_000;

/**
 * One loop's (or the API's) view of a database outage (Engine.isUnavailable: a full disk, a
 * read-only file system, an unreachable server; docs/operations-embedded.md "A full disk").
 * A loop that fails on every round would otherwise log on every round and, where work is due,
 * retry at once: thousands of lines a second, and one core spinning, until the disk is back.
 * This logs the outage once as it begins (again once a minute while it lasts, with the count),
 * once as it ends, and says how long to wait before the next try.
 */
export class Outage {
  private since: number | undefined;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private failures = 0;
  private lastFailureAt = 0;
  private backoffMs = 0;

  constructor(
    /** What is failing, for the log line: "fulfilment worker", "webhook dispatcher", "API". */
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {}

  get ongoing(): boolean {
    return this.since !== undefined;
  }

  /** Counts a failure, logs it if due, and returns how long to wait before trying again (ms). */
  failed(logger: Logger, error: unknown): number {
    const now = this.now();
    if (this.since !== undefined && now - this.lastFailureAt >= NEW_OUTAGE_AFTER_MS) this.reset();
    this.since ??= now;
    this.lastFailureAt = now;
    this.failures++;
    if (now - this.loggedAt >= LOG_EVERY_MS) {
      this.loggedAt = now;
      const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
      logger.warn(
        { code, message: error instanceof Error ? error.message : String(error), failures: this.failures, since: new Date(this.since).toISOString() },
        `${this.what}: database unavailable; retrying`,
      );
    }
    this.backoffMs = this.backoffMs === 0 ? FIRST_BACKOFF_MS : Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    return this.backoffMs;
  }

  /** Work succeeded: ends the outage, if there was one, with a line saying how long it lasted. */
  recovered(logger: Logger): void {
    if (this.since === undefined) return;
    logger.info({ outage_ms: this.now() - this.since, failures: this.failures }, `${this.what}: database available again`);
    this.reset();
  }

  private reset(): void {
    this.since = undefined;
    this.loggedAt = Number.NEGATIVE_INFINITY;
    this.failures = 0;
    this.backoffMs = 0;
  }
}
