import { ToncenterError, type V2Transaction } from '../ton/toncenter.js';
import type { Cursor } from './progress.js';

/**
 * Walking the deposit wallet's history back from its newest transaction (or a backlog walk's
 * resume point) towards the persisted cursor, page by page (docs/architecture.md, "Deposits").
 * The watcher (watcher.ts) decides what to do with the rows; this only finds them, each once.
 */

/** Pages did not lead back to the cursor (a broken or shifting server answer): nothing is processed. */
export class WalkError extends ToncenterError {}

/** One page of getTransactions, newest first: `limit` rows from `start` (inclusive) or from the newest. */
export type PageReader = (limit: number, start: { lt: string; hash: string } | undefined) => Promise<V2Transaction[]>;

/**
 * Pages back from the newest transaction (`from` undefined) or from a walk's resume point
 * (exclusive) towards the cursor, for at most `maxPages` pages. Rows newest first, each once,
 * contiguous: every page starts at the oldest row of the previous one. `complete`: the walk
 * reached the cursor, or the wallet's first transaction.
 */
export async function walkBack(
  readPage: PageReader,
  limits: { pageSize: number; maxPages: number },
  cursor: Cursor | undefined,
  from: { lt: bigint; hash: string } | undefined,
): Promise<{ rows: V2Transaction[]; complete: boolean }> {
  const found = new Map<string, V2Transaction>();
  const maxPages = Math.max(1, limits.maxPages);
  const collected = () => [...found.values()].sort((a, b) => compareLt(b.transaction_id.lt, a.transaction_id.lt));
  let start: { lt: string; hash: string } | undefined = from && { lt: String(from.lt), hash: Buffer.from(from.hash, 'hex').toString('base64') };
  let stalls = 0;
  for (let page = 0; page < maxPages; page++) {
    const limit = start ? limits.pageSize + 1 : limits.pageSize;
    const rows = await readPage(limit, start);
    let reachedCursor = false;
    let added = 0;
    for (const row of rows) {
      const lt = BigInt(row.transaction_id.lt);
      // A walk's resume point and anything newer are processed already.
      if (from && lt >= from.lt) continue;
      // lt is strictly increasing per account: anything at or below the cursor is done.
      if (cursor && lt <= cursor.lt) {
        reachedCursor = true;
        continue;
      }
      if (!found.has(row.transaction_id.hash)) {
        found.set(row.transaction_id.hash, row);
        added++;
      }
    }
    if (reachedCursor) return { rows: collected(), complete: true };
    if (rows.length < limit) {
      // The wallet's first transaction. With a cursor that cannot be: its transaction is in
      // the history, further back. Refuse rather than move the cursor over a gap.
      if (cursor) throw new WalkError(`getTransactions history ended at lt ${rows[rows.length - 1]?.transaction_id.lt ?? '(none)'}, above the cursor ${cursor.lt}`, true);
      return { rows: collected(), complete: true };
    }
    const oldest = rows.reduce((min, row) => (compareLt(row.transaction_id.lt, min.transaction_id.lt) < 0 ? row : min));
    // A page that brings nothing older (a server answering from a shifted or stale view):
    // ask again from the same start a couple of times, then give up rather than guess.
    if (start && added === 0 && compareLt(oldest.transaction_id.lt, start.lt) >= 0) {
      if (++stalls > 2) throw new WalkError('getTransactions pages do not move back in time', true);
      continue;
    }
    stalls = 0;
    start = { lt: oldest.transaction_id.lt, hash: oldest.transaction_id.hash };
  }
  return { rows: collected(), complete: false };
}

function compareLt(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
