import { Address } from '@ton/core';
import type { Logger } from 'pino';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import { MAX_PAGE, type RetryPolicy, sleep, type ToncenterClient, ToncenterError, type V2Transaction, withRetry } from '../ton/toncenter.js';
import { formatUsdt } from '../domain/usdt.js';
import { walkBack } from './chain-walk.js';
import { type ChainTransaction, decodeTransaction } from './classify.js';
import { type DepositRules, depositOf, type UsdtOptions } from './deposit-of.js';
import { JettonMasterError, jettonWalletOf } from './jetton-wallet.js';
import { type Cursor, finishWalk, markChecked, type Position, type Progress, readCursor, readWalk } from './progress.js';
import { creditAwaitingRate, type Outcome, recordTransaction } from './store.js';

/**
 * The deposit watcher: polls toncenter v2 `getTransactions` for the deposit wallet,
 * walks back from the newest transaction to the persisted cursor (pages overlap by one row:
 * lt+hash is an inclusive start; every row is deduped by hash), then processes the new ones
 * oldest first, each in its own database transaction with the cursor (store.ts). It is
 * at-least-once over the chain and exactly-once into the ledger: any number of watchers may
 * run (scale-out), restart, or re-read a page.
 *
 * A backlog larger than one poll may page through (`maxPages` × `pageSize`: long downtime, or
 * a first start without a cursor on a wallet with a long history) is walked in pieces so that
 * every poll makes progress: the poll processes what it collected, newest first, and persists
 * a walk (store.ts `Walk`: the newest transaction when it started, `top`, and how far back it
 * got, `resume`) with each transaction; the next polls page on from `resume` towards the
 * cursor, and the one that reaches it moves the cursor to `top` and ends the walk.
 * Transactions newer than `top` are found by the walk after that. Nothing is skipped (the
 * cursor only ever moves over transactions that are all processed) and nothing is credited
 * twice (the deposit row is unique per transaction hash, whatever the order).
 *
 * Without a cursor (first start) the same walk reads the wallet's whole history, oldest
 * deposits included: a transfer with a valid memo is credited whenever it arrived, which is
 * what its sender asked for, and one that predates the service is at worst unmatched, for the
 * operator to decide.
 */
export { usdtRateFrom } from './usdt-rate.js';

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
  /**
   * Pages one poll reads at most. A backlog longer than that is processed over several polls
   * (a persisted walk), never given up on.
   */
  maxPages?: number;
  retry?: RetryPolicy;
  /** USDT top-ups (docs/operations.md "USDT top-ups"); absent: jetton notifications are ignored. */
  usdt?: UsdtOptions;
  /** After each processed transaction (logs, tests). */
  onOutcome?: (outcome: Outcome, tx: ChainTransaction) => void;
}

export interface PollResult {
  fetched: number;
  outcomes: Outcome[];
  /** USDT deposits that waited for a rate and were credited by this poll. */
  creditedAwaiting?: number;
}

export class DepositWatcher {
  readonly wallet: Address;
  readonly rawAddress: string;
  private readonly pageSize: number;
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private failures = 0;
  /** A database outage: retried after src/db/outage.ts's short backoff, logged once. */
  private readonly outage = new Outage('deposit watcher');
  /** The deposit wallet's USDT jetton wallet, once known (jetton-wallet.ts). */
  private usdtWallet: Address | undefined;
  private usdtOff = false;

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
        this.outage.recovered(this.options.logger);
      } catch (error) {
        if (this.options.db.engine.isUnavailable(error)) {
          // The database, not toncenter: a poll reads its cursor first, so retrying soon costs
          // toncenter nothing, and the watcher resumes as soon as the database answers.
          await sleep(this.outage.failed(this.options.logger, error), this.abort.signal);
          continue;
        }
        this.failures++;
        this.options.logger.warn(
          { err: error instanceof ToncenterError ? { message: error.message, status: error.status } : error, failures: this.failures },
          'deposit watcher poll failed',
        );
      }
      // Consecutive failures back off: poll interval × 2^n, at most a minute.
      const delay = this.failures === 0 ? this.options.pollMs : Math.min(60_000, this.options.pollMs * 2 ** Math.min(this.failures, 10));
      await sleep(delay, this.abort.signal);
    }
  }

  /**
   * One poll. With a backlog walk in progress: the next piece of it, back towards the cursor.
   * Otherwise everything newer than the cursor, oldest first — or, when that is more than
   * `maxPages` pages, the newest part of it, which starts a walk.
   */
  async pollOnce(): Promise<PollResult> {
    const result = await this.pollChain();
    const awaiting = await this.creditAwaiting();
    return awaiting === undefined ? result : { ...result, creditedAwaiting: awaiting };
  }

  /**
   * USDT deposits that matched an account while no fresh rate existed: credited now, at the
   * rate of this moment, if the feed has one.
   */
  private async creditAwaiting(): Promise<number | undefined> {
    const usdt = this.options.usdt;
    if (!usdt || this.stopped) return undefined;
    const credited = await creditAwaitingRate(this.options.db, usdt.rate, usdt.spreadPercent);
    for (const d of credited) {
      this.options.logger.info(
        { deposit_id: d.id, tx_hash: d.txHash, account_id: d.accountId, usdt: formatUsdt(d.jettonAmount ?? 0n), rate: d.rate },
        'USDT deposit credited at the current rate after waiting for one',
      );
    }
    return credited.length;
  }

  private async pollChain(): Promise<PollResult> {
    const { db } = this.options;
    const address = this.rawAddress;
    // The USDT jetton wallet must be known before any notification is judged: without it a
    // real USDT deposit would look like a foreign jetton's.
    if (this.options.usdt && !this.usdtWallet && !this.usdtOff) {
      try {
        this.usdtWallet = await jettonWalletOf(db.kysely, this.options.client, this.wallet, Address.parse(this.options.usdt.master), {
          retry: { ...this.options.retry, signal: this.abort.signal },
        });
      } catch (error) {
        if (!(error instanceof JettonMasterError)) throw error;
        // No such master on this chain: no real USDT can arrive, and TON top-ups must go on.
        this.usdtOff = true;
        this.options.logger.error({ err: { message: error.message } }, 'USDT top-ups are off until restart: USDT_MASTER does not answer get_wallet_address');
      }
    }
    const [cursor, walk] = await Promise.all([readCursor(db.kysely, address), readWalk(db.kysely, address)]);
    if (walk) {
      const found = await this.walkBack(cursor, walk.resume);
      const { outcomes, finished } = await this.processAll(found.rows, { kind: 'walk', top: walk.top, begin: false });
      const done = finished && found.complete;
      // Everything from the cursor up to the walk's resume point is processed now, and the walk
      // had everything from there up to its top: the cursor may move to the top.
      if (done) await finishWalk(db, address, walk.top);
      this.logWalk(walk.top, found.rows, outcomes.length, done);
      return { fetched: found.rows.length, outcomes };
    }
    const found = await this.walkBack(cursor, undefined);
    if (!found.complete) {
      const newest = found.rows[0] as V2Transaction;
      const top = { lt: BigInt(newest.transaction_id.lt), hash: Buffer.from(newest.transaction_id.hash, 'base64').toString('hex'), chainTime: newest.utime * 1000 };
      const { outcomes } = await this.processAll(found.rows, { kind: 'walk', top, begin: true });
      this.logWalk(top, found.rows, outcomes.length, false);
      return { fetched: found.rows.length, outcomes };
    }
    const { outcomes, finished } = await this.processAll(found.rows.reverse(), { kind: 'cursor' });
    if (finished) await markChecked(db.kysely, address, Date.now());
    return { fetched: found.rows.length, outcomes };
  }

  /**
   * Processes `rows` in the order given, each in its own database transaction with `progress`.
   * `finished` false: the watcher was stopped before the end (the rest waits for the next poll).
   *
   * A backlog walk passes its rows newest first, which is what lets the walk's resume point
   * follow each transaction. The order does not matter to the ledger: a credit only adds to a
   * balance, depends on no other transaction, and happens at most once per transaction hash
   * (the deposit row is unique), so newest-first credits exactly what oldest-first would.
   */
  private async processAll(rows: V2Transaction[], progress: Progress): Promise<{ outcomes: Outcome[]; finished: boolean }> {
    const outcomes: Outcome[] = [];
    for (const row of rows) {
      if (this.stopped) return { outcomes, finished: false };
      const chainTx = this.decode(row);
      const outcome = await recordTransaction(this.options.db, await depositOf(chainTx, this.rules()), Date.now(), progress);
      outcomes.push(outcome);
      this.log(outcome, chainTx);
      this.options.onOutcome?.(outcome, chainTx);
    }
    return { outcomes, finished: true };
  }

  /**
   * One page of getTransactions, retried, always with `archival=true`. toncenter's regular
   * liteservers keep about two days of history (docs/upstreams.md "toncenter v2") and fail a whole
   * page with a 500 ("LITE_SERVER_UNKNOWN: … lt not in db") as soon as one row of it is older
   * (toncenter/ton-http-api#79 and #90, ton-blockchain/ton#1105; the maintainers' answer:
   * archival=true, which sends the request to liteservers with the full history). The watcher
   * meets old rows in every case that matters: pages walking back after downtime, a first
   * start on a wallet with a history, and the newest page itself on a quiet deposit wallet
   * (its newest 50 transactions may be weeks old) — there, asking a regular liteserver first
   * would cost a failed request on every poll. Archival liteservers serve recent history too.
   */
  /** The history back towards the cursor, through `page` (chain-walk.ts). */
  private walkBack(cursor: Cursor | undefined, from: { lt: bigint; hash: string } | undefined) {
    return walkBack((limit, start) => this.page(limit, start), { pageSize: this.pageSize, maxPages: this.options.maxPages ?? 200 }, cursor, from);
  }

  private async page(limit: number, start: { lt: string; hash: string } | undefined): Promise<V2Transaction[]> {
    return withRetry(() => this.options.client.getTransactions(this.options.address, { limit, ...(start && { lt: start.lt, hash: start.hash }), archival: true }), {
      ...this.options.retry,
      signal: this.abort.signal,
    });
  }

  /**
   * The BOC is the truth; the JSON's id must agree with it, and the transaction must be the
   * deposit wallet's own (lt and the cursor only mean something within one account's history).
   */
  private decode(row: V2Transaction): ChainTransaction {
    const chainTx = decodeTransaction(row.data);
    const hash = Buffer.from(row.transaction_id.hash, 'base64').toString('hex');
    if (chainTx.hash !== hash || chainTx.lt !== BigInt(row.transaction_id.lt)) {
      throw new ToncenterError(`transaction ${row.transaction_id.lt} does not match its BOC`, false);
    }
    if (chainTx.tx.address !== BigInt(`0x${this.wallet.hash.toString('hex')}`)) {
      throw new ToncenterError(`transaction ${chainTx.hash} belongs to another account than the deposit wallet`, false);
    }
    return chainTx;
  }

  private rules(): DepositRules {
    const { minAmount, usdt } = this.options;
    return { wallet: this.wallet, rawAddress: this.rawAddress, minAmount, usdt, usdtWallet: this.usdtWallet };
  }

  private logWalk(top: Position, rows: V2Transaction[], processed: number, done: boolean): void {
    const fields = { top_lt: String(top.lt), processed, reached_lt: rows[rows.length - 1]?.transaction_id.lt ?? null };
    if (done) this.options.logger.info(fields, 'deposit watcher: backlog walk finished, the cursor moved to its top');
    else this.options.logger.info(fields, 'deposit watcher: working through a backlog of transactions, newest first');
  }

  private log(outcome: Outcome, chainTx: ChainTransaction): void {
    const fields = { tx_hash: chainTx.hash, lt: String(chainTx.lt) };
    if (outcome.kind === 'credited') this.options.logger.info({ ...fields, account_id: outcome.accountId, deposit_id: outcome.id }, 'deposit credited');
    else if (outcome.kind === 'awaiting_rate')
      this.options.logger.warn(
        { ...fields, account_id: outcome.accountId, deposit_id: outcome.id },
        'USDT deposit waits for a fresh TON/USD rate: it is credited at the rate of that moment',
      );
    else if (outcome.kind === 'unknown_jetton')
      this.options.logger.warn(
        { ...fields, deposit_id: outcome.id },
        "jetton notification from a contract that is not the deposit wallet's USDT jetton wallet: a fake or another token, not credited",
      );
    else if (outcome.kind === 'unmatched')
      this.options.logger.warn(
        { ...fields, reason: outcome.reason, deposit_id: outcome.id },
        'deposit unmatched: assign it with `starport deposit assign`, or send it back and record that with `starport deposit return`',
      );
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
