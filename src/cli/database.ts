import { loadConfig } from '../config.js';
import type { Db } from '../db/engine.js';
import { openConfiguredDatabase } from '../db/open.js';

/** Opens (and migrates) the configured database for one command, and always closes it. */
export async function withDatabase<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openConfiguredDatabase(loadConfig());
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}
