import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, LogFn, Logger } from 'pino';

/**
 * Fastify's `childLoggerFactory`: a request's logger, carrying its request id, made by pino
 * only once the request logs at a level that is enabled.
 *
 * Fastify gives every request a child logger, and pino builds one at once (its bindings
 * serialised, a new object chain): about 1.5 % of a read's CPU (docs/performance-history.md "Tenth round", `perf`), though at
 * the service's usual level (`warn`) a request that succeeds logs nothing. A route with its
 * own log options (level, serializers) gets pino's child at once.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (Object.keys(options).length > 0) return logger.child(bindings, options);
  return new RequestLogger(logger as Logger, bindings);
}

class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  readonly fatal: LogFn = (...args: unknown[]) => this.log('fatal', args);
  readonly error: LogFn = (...args: unknown[]) => this.log('error', args);
  readonly warn: LogFn = (...args: unknown[]) => this.log('warn', args);
  readonly info: LogFn = (...args: unknown[]) => this.log('info', args);
  readonly debug: LogFn = (...args: unknown[]) => this.log('debug', args);
  readonly trace: LogFn = (...args: unknown[]) => this.log('trace', args);
  readonly silent: LogFn = () => undefined;

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }

  private logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings);
    return this.made;
  }

  private log(level: Level, args: unknown[]): void {
    // The parent's level is the child's until the child is made.
    if (!this.made && !this.parent.isLevelEnabled(level)) return;
    (this.logger()[level] as (...values: unknown[]) => void)(...args);
  }
}
