import { Address } from '@ton/core';
import type { Logger } from 'pino';
import type { Db } from '../db/engine.js';
import { MAX_PAGE, type RetryPolicy, sleep, type ToncenterClient, ToncenterError, type V2Transaction, withRetry } from '../ton/toncenter.js';
import { type ChainTransaction, classify, decodeTransaction, memoOf } from './classify.js';
import { type Cursor, markChecked, type Outcome, type Processed, readCursor, recordTransaction } from './store.js';

/**
 * The deposit watcher (issue 7): polls toncenter v2 `getTransactions` for the deposit wallet,
 * walks back from the newest transaction to the persisted cursor (pages overlap by one row:
 * lt+hash is an inclusive start; every row is deduped by hash), then processes the new ones
 * oldest first, each in its own database transaction with the cursor (store.ts). It is
 * at-least-once over the chain and exactly-once into the ledger: any number of watchers may
 * run (scale-out), restart, or re-read a page.
 */
export interface WatcherOptions {
  db: Db;
  logger: Logger;
  client: ToncenterClient;
  /** The deposit wallet, any form @ton/core parses. */
  address: string;
  /** Below this (nanotons) a transfer is recorded as unmatched `below_minimum`. */
  minAmount: bigint;
  pollMs: number;
  /** Rows asked per page (≤ 99: the inclusive start row takes one). */
  pageSize?: number;
  /** A walk longer than this many pages gives up (and retries later) rather than risk a gap. */
  maxPages?: number;
  retry?: RetryPolicy;
  /** After each processed transaction (logs, tests). */
  onOutcome?: (outcome: Outcome, tx: ChainTransaction) => void;
}

export interface PollResult {
  fetched: number;
  outcomes: Outcome[];
}

/** Pages did not lead back to the cursor (a broken or shifting server answer): nothing is processed. */
export class WalkError extends ToncenterError {}

export class DepositWatcher {
  readonly wallet: Address;
  readonly rawAddress: string;
  private readonly pageSize: number;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private failures = 0;

  constructor(private readonly options: WatcherOptions) {
    this.wallet = Address.parse(options.address.trim());
    this.rawAddress = this.wallet.toRawString();
    this.pageSize = Math.min(options.pageSize ?? 50, MAX_PAGE - 1);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops between two transactions (never inside one) and waits for the loop to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.pollOnce();
        this.failures = 0;
      } catch (error) {
        this.failures++;
        this.options.logger.warn({ err: error instanceof ToncenterError ? { message: error.message, status: error.status } : error, failures: this.failures }, 'deposit watcher poll failed');
      }
      // Consecutive failures back off: poll interval × 2^n, at most a minute.
      const delay = this.failures === 0 ? this.options.pollMs : Math.min(60_000, this.options.pollMs * 2 ** Math.min(this.failures, 10));
      await sleep(delay, this.abort.signal);
    }
  }

  /** One poll: fetch everything newer than the cursor, process it oldest first. */
  async pollOnce(): Promise<PollResult> {
    const { db } = this.options;
    const cursor = await readCursor(db.kysely, this.rawAddress);
    const rows = await this.newTransactions(cursor);
    const outcomes: Outcome[] = [];
    for (const row of rows) {
      if (this.stopped) return { fetched: rows.length, outcomes };
      const chainTx = this.decode(row);
      const outcome = await recordTransaction(db, this.process(chainTx));
      outcomes.push(outcome);
      this.log(outcome, chainTx);
      this.options.onOutcome?.(outcome, chainTx);
    }
    await markChecked(db.kysely, this.rawAddress, Date.now());
    return { fetched: rows.length, outcomes };
  }

  /** The transactions after the cursor, oldest first, each once. */
  private async newTransactions(cursor: Cursor | undefined): Promise<V2Transaction[]> {
    const found = new Map<string, V2Transaction>();
    const maxPages = this.options.maxPages ?? 200;
    let start: { lt: string; hash: string } | undefined;
    let stalls = 0;
    for (let page = 0; page < maxPages; page++) {
      const limit = start ? this.pageSize + 1 : this.pageSize;
      const rows = await withRetry(
        () => this.options.client.getTransactions(this.options.address, { limit, ...(start && { lt: start.lt, hash: start.hash }) }),
        { ...this.options.retry, signal: this.abort.signal },
      );
      let reachedCursor = false;
      let added = 0;
      for (const row of rows) {
        const lt = BigInt(row.transaction_id.lt);
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
      if (reachedCursor || rows.length < limit) return [...found.values()].sort((a, b) => compareLt(a.transaction_id.lt, b.transaction_id.lt));
      const oldest = rows.reduce((min, row) => (compareLt(row.transaction_id.lt, min.transaction_id.lt) < 0 ? row : min));
 // A page that brings nothing older (a server answering from a shifted or stale view):
      // ask again from the same start a couple of times, then give up rather than guess.
      if (added === 0 && start && oldest.transaction_id.lt === start.lt) {
        if (++stalls > 2) throw new WalkError('getTransactions pages do not move back in time', true);
        continue;
      }
      stalls = 0;
      start = { lt: oldest.transaction_id.lt, hash: oldest.transaction_id.hash };
    }
    throw new WalkError(`more than ${maxPages} pages of new transactions; will retry`, true);
  }

  /** The BOC is the truth; the JSON's id must agree with it. */
  private decode(row: V2Transaction): ChainTransaction {
    const chainTx = decodeTransaction(row.data);
    const hash = Buffer.from(row.transaction_id.hash, 'base64').toString('hex');
    if (chainTx.hash !== hash || chainTx.lt !== BigInt(row.transaction_id.lt)) {
      throw new ToncenterError(`transaction ${row.transaction_id.lt} does not match its BOC`, false);
    }
    return chainTx;
  }

  private process(chainTx: ChainTransaction): Processed {
    const position = { lt: chainTx.lt, hash: chainTx.hash, chainTime: chainTx.utime * 1000 };
    const verdict = classify(chainTx.tx, this.wallet);
    if (verdict.kind === 'ignore') return { address: this.rawAddress, position, deposit: null };
    const memo = memoOf(verdict.comment);
    const reason = verdict.amount < this.options.minAmount ? 'below_minimum' : memo.ok ? null : memo.reason;
    return {
      address: this.rawAddress,
      position,
      deposit: { sender: verdict.sender.toRawString(), amount: verdict.amount, comment: verdict.comment, memo: memo.ok ? memo.memo : null, reason },
    };
  }

  private log(outcome: Outcome, chainTx: ChainTransaction): void {
    const fields = { tx_hash: chainTx.hash, lt: String(chainTx.lt) };
    if (outcome.kind === 'credited') this.options.logger.info({ ...fields, account_id: outcome.accountId, deposit_id: outcome.id }, 'deposit credited');
    else if (outcome.kind === 'unmatched') this.options.logger.warn({ ...fields, reason: outcome.reason, deposit_id: outcome.id }, 'deposit unmatched: assign it with `starport deposit assign`');
    else if (outcome.kind === 'ignored' && strandedValue(chainTx) > 0n) {
      // Coins that stayed although the transaction aborted (a non-bounceable transfer to the
      // wallet before it was deployed): not a deposit by the rules, but the operator should know.
      this.options.logger.warn({ ...fields, amount: String(strandedValue(chainTx)) }, 'TON arrived in an aborted transaction and was not credited: check it on an explorer');
    } else this.options.logger.debug({ ...fields, outcome: outcome.kind }, 'deposit wallet transaction skipped');
  }
}

/** Inbound internal value that stayed on an aborted transaction without out messages (0 otherwise). */
function strandedValue({ tx }: ChainTransaction): bigint {
  const info = tx.inMessage?.info;
  if (info?.type !== 'internal' || info.bounced || tx.outMessagesCount !== 0) return 0n;
  return tx.description.type === 'generic' && tx.description.aborted ? info.value.coins : 0n;
}

function compareLt(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
