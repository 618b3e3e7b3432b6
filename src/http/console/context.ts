import type { Db } from '../../db/engine.js';

/** What the operator console needs from the composition root (src/service.ts). */
export interface ConsoleContext {
  db: Db;
}
