import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readCursor } from '../deposits/progress.js';
import { formatDuration, incidentOpen, openIncident, resolveIncident } from './incidents.js';

export const WATCHER_INCIDENT = 'deposit_watcher';

/**
 * The deposit watcher's health as an incident: no successful poll (the cursor's `checked_at`)
 * for `stallMs` opens it, the next successful poll resolves it. `since` stands in for a watcher
 * that has not polled successfully yet (the worker's start): it may open the incident, never
 * resolve it.
 */
export async function checkWatcher(db: Kysely<Database>, address: string, stallMs: number, now: number, since = now): Promise<void> {
  const cursor = await readCursor(db, address);
  const lastOk = cursor?.checkedAt ?? since;
  const silent = now - lastOk;
  const open = await incidentOpen(db, WATCHER_INCIDENT);
  if (silent > stallMs && !open) {
    await db.transaction().execute((tx) =>
      openIncident(
        tx,
        WATCHER_INCIDENT,
        {
          title: 'The deposit watcher is stalled',
          message: {
            subject: 'Deposit watcher stalled: top-ups are not credited',
            parts: [
              `The deposit watcher has not read the chain successfully for ${formatDuration(silent)} (NOTIFY_WATCHER_STALL_SECONDS).`,
              'Check TON_API_URL, TON_API_KEY and the worker log; deposits are credited once it reads again.',
            ],
          },
        },
        now,
      ),
    );
  } else if (open && cursor !== undefined && silent <= stallMs) {
    // Only a real successful poll ends it: another node's later start is no news of the watcher.
    await db
      .transaction()
      .execute((tx) =>
        resolveIncident(
          tx,
          WATCHER_INCIDENT,
          (lasted) => ({ subject: 'Resolved: the deposit watcher reads the chain again', parts: [`It was stalled for ${formatDuration(lasted)}.`] }),
          now,
        ),
      );
  }
}
