import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readCursor } from './progress.js';
import { unmatchedCount } from './store.js';

/**
 * The deposit watcher as every node sees it, read from the database (the watcher itself runs
 * on worker nodes): lag = now − block time of the newest processed transaction,
 * and when a poll last reached the chain's newest transaction.
 */
export interface WatcherStatus {
  /** null until the watcher processed a first transaction. */
  lagSeconds: number | null;
  lastCheckedAt: number | null;
  unmatched: number;
}

export async function watcherStatus(db: Kysely<Database>, rawAddress: string, now = Date.now()): Promise<WatcherStatus> {
  const cursor = await readCursor(db, rawAddress);
  return {
    lagSeconds: cursor ? Math.max(0, (now - cursor.chainTime) / 1000) : null,
    lastCheckedAt: cursor ? cursor.checkedAt : null,
    unmatched: await unmatchedCount(db),
  };
}
