import { Address } from '@ton/core';
import type { Logger } from 'pino';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import { MAX_PAGE, type RetryPolicy, sleep, type ToncenterClient, ToncenterError, type V2Transaction, withRetry } from '../ton/toncenter.js';
import type { Decimal } from '../domain/decimal.js';
import { formatUsdt } from '../domain/usdt.js';
import { type ChainTransaction, classify, decodeTransaction, memoOf } from './classify.js';
import { JettonMasterError, jettonWalletOf } from './jetton-wallet.js';
import {
  type Cursor,
  creditAwaitingRate,
  finishWalk,
  markChecked,
  type Outcome,
  type Position,
  type Processed,
  type Progress,
  readCursor,
  readWalk,
  recordTransaction,
  type UsdtRate,
} from './store.js';

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

interface UsdtOptions {
  /** The USDT jetton master (USDT_MASTER). */
  master: string;
  /** USDT_DEPOSIT_MIN in units (6 decimals): smaller deposits are unmatched `below_minimum`. */
  minUnits: bigint;
  /** USDT_DEPOSIT_SPREAD_PERCENT. */
  spreadPercent: Decimal;
  /** The rate feed's TON/USD rate now, or undefined when there is no fresh one. */
  rate: () => Promise<UsdtRate | undefined>;
}

export interface PollResult {
  fetched: number;
  outcomes: Outcome[];
  /** USDT deposits that waited for a rate and were credited by this poll. */
  creditedAwaiting?: number;
}

/** Pages did not lead back to the cursor (a broken or shifting server answer): nothing is processed. */
class WalkError extends ToncenterError {}

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
      const outcome = await recordTransaction(this.options.db, await this.process(chainTx), Date.now(), progress);
      outcomes.push(outcome);
      this.log(outcome, chainTx);
      this.options.onOutcome?.(outcome, chainTx);
    }
    return { outcomes, finished: true };
  }

  /**
   * Pages back from the newest transaction (`from` undefined) or from a walk's resume point
   * (exclusive) towards the cursor, for at most `maxPages` pages. Rows newest first, each once,
   * contiguous: every page starts at the oldest row of the previous one. `complete`: the walk
   * reached the cursor, or the wallet's first transaction.
   */
  private async walkBack(cursor: Cursor | undefined, from: { lt: bigint; hash: string } | undefined): Promise<{ rows: V2Transaction[]; complete: boolean }> {
    const found = new Map<string, V2Transaction>();
    const maxPages = Math.max(1, this.options.maxPages ?? 200);
    const collected = () => [...found.values()].sort((a, b) => compareLt(b.transaction_id.lt, a.transaction_id.lt));
    let start: { lt: string; hash: string } | undefined = from && { lt: String(from.lt), hash: Buffer.from(from.hash, 'hex').toString('base64') };
    let stalls = 0;
    for (let page = 0; page < maxPages; page++) {
      const limit = start ? this.pageSize + 1 : this.pageSize;
      const rows = await this.page(limit, start);
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

  private async process(chainTx: ChainTransaction): Promise<Processed> {
    const position = { lt: chainTx.lt, hash: chainTx.hash, chainTime: chainTx.utime * 1000 };
    const verdict = classify(chainTx.tx, this.wallet);
    if (verdict.kind === 'ignore') return { address: this.rawAddress, position, deposit: null };
    if (verdict.kind === 'jetton') {
      const n = verdict.notification;
      const usdt = this.options.usdt;
      // Without USDT top-ups configured a notification is what it was before: TON that arrived
      // without a text comment.
      if (!usdt || !this.usdtWallet) {
        const reason = n.value < this.options.minAmount ? 'below_minimum' : 'no_comment';
        return { address: this.rawAddress, position, deposit: { sender: n.source.toRawString(), amount: n.value, comment: null, memo: null, reason } };
      }
      const sender = (n.sender ?? n.source).toRawString();
      if (!n.source.equals(this.usdtWallet)) {
        return {
          address: this.rawAddress,
          position,
          deposit: {
            sender,
            amount: n.value,
            comment: n.comment,
            memo: null,
            reason: null,
            jetton: { kind: 'jetton', units: n.jettonAmount, jettonWallet: n.source.toRawString() },
          },
        };
      }
      const memo = memoOf(n.comment);
      const reason = n.jettonAmount < usdt.minUnits ? 'below_minimum' : memo.ok ? null : memo.reason;
      // The rate is asked only for a deposit that can be credited, outside the database transaction.
      const rate = reason === null ? await usdt.rate() : undefined;
      return {
        address: this.rawAddress,
        position,
        deposit: {
          sender,
          amount: 0n,
          comment: n.comment,
          memo: memo.ok ? memo.memo : null,
          reason,
          jetton: { kind: 'USDT', units: n.jettonAmount, jettonWallet: n.source.toRawString(), conversion: { rate, spreadPercent: usdt.spreadPercent } },
        },
      };
    }
    const memo = memoOf(verdict.comment);
    const reason = verdict.amount < this.options.minAmount ? 'below_minimum' : memo.ok ? null : memo.reason;
    return {
      address: this.rawAddress,
      position,
      deposit: { sender: verdict.sender.toRawString(), amount: verdict.amount, comment: verdict.comment, memo: memo.ok ? memo.memo : null, reason },
    };
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

function compareLt(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
