import type { Logger } from 'pino';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import { ping } from '../db/reach.js';
import { nodeLostDatabase, thisNode } from './notices.js';

/** How often an API-only node asks its database for `select 1`. */
export const DATABASE_WATCH_MS = 2_000;

/**
 * An API-only node runs no notification worker, whose claims would notice a lost database:
 * this asks the database every `everyMs` and, once it answers again after failing, queues the
 * operator's "a node lost its database" with how long it was gone (docs/operations.md
 * "Notifications"). An outage shorter than one interval may go unreported; its requests were
 * answered 503 with Retry-After all the same.
 */
export class DatabaseWatch {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private lostSince: number | undefined;
  private readonly outage = new Outage('database watch');

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly everyMs = DATABASE_WATCH_MS,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.checking ??= this.check().finally(() => {
        this.checking = undefined;
      });
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
  }

  private async check(): Promise<void> {
    try {
      await ping(this.db.kysely);
      if (this.lostSince === undefined) return;
      const lost = this.now() - this.lostSince;
      await this.db.kysely.transaction().execute((tx) => nodeLostDatabase(tx, thisNode(), lost, this.now()));
      this.lostSince = undefined;
      this.outage.recovered(this.logger);
    } catch (error) {
      if (!this.db.engine.isUnavailable(error)) {
        this.logger.error({ err: error }, 'database watch failed');
        return;
      }
      this.lostSince ??= this.now();
      this.outage.failed(this.logger, error);
    }
  }
}
