import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Address, beginCell, Cell, loadMessage, loadTransaction, type Message, type MessageRelaxed, storeMessage, type Transaction, type TupleItem } from '@ton/core';
import { Blockchain, type SendMessageResult } from '@ton/sandbox';

/**
 * A fake toncenter API v2 on loopback, backed by TON's emulator (@ton/sandbox): every
 * transaction it serves is a real one the emulator executed (or a real BOC a test injects,
 * such as a published mainnet vector), in toncenter's JSON shapes (docs/upstreams.md "toncenter v2";
 * the published vectors of ton-community/ton-docs). Shared by the deposit watcher's tests and the paying wallet's:
 *
 *   GET  /api/v2/getTransactions  address, limit (≤ 100 else 422), lt+hash (inclusive start,
 *        hash hex or base64), to_lt (exclusive lower bound), archival (see archivalBeforeLt),
 *        newest first
 *   GET  /api/v2/getAddressBalance, getAddressInformation, getWalletInformation
 *   POST /api/v2/sendBoc, sendBocReturnHash ({boc}), runGetMethod ({address, method, stack})
 *   POST /api/v2/jsonRPC          {id, jsonrpc, method, params}: the same methods, the form
 *        @ton/ton's TonClient speaks (endpoint `${url}/jsonRPC`)
 *
 * Faults (`fault()`): the next N matching requests answer 429 (with Retry-After), 500,
 * `ok:false`, never (a timeout for the client), or — for getTransactions — an overlapping
 * page (starting `shift` rows newer than asked) or a duplicated page (the newest page again,
 * ignoring lt/hash). Every request is logged in `requests` (the API key only as present/absent
 * plus its value, so tests can check it is sent as a header and never in the URL).
 */
export type Fault =
  | { kind: 'status'; status: 429 | 500 | 502 | 503; retryAfter?: number }
  | { kind: 'ok_false'; status?: number; error?: string }
  | { kind: 'hang' }
  | { kind: 'overlap'; shift: number }
  | { kind: 'duplicate_page' };

export interface RecordedRequest {
  method: string;
  /** The v2 method (getTransactions…), also for jsonRPC. */
  api: string;
  params: Record<string, string>;
  url: string;
  apiKey: string | undefined;
  fault?: Fault['kind'];
}

interface StoredTx {
  tx: Transaction;
  boc: string;
  hash: Buffer;
  /** Raw address of the account the transaction belongs to. */
  account: string;
}

export class FakeToncenter {
  readonly requests: RecordedRequest[] = [];
  private readonly txs: StoredTx[] = [];
  private readonly faults: { api: string | undefined; fault: Fault; remaining: number }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly hanging = new Set<http.ServerResponse>();

  private constructor(
    readonly blockchain: Blockchain,
    private readonly server: http.Server,
    /** Base URL ending in /api/v2. */
    readonly url: string,
  ) {}

  static async start(options: { blockchain?: Blockchain } = {}): Promise<FakeToncenter> {
    const blockchain = options.blockchain ?? (await Blockchain.create());
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fake = new FakeToncenter(blockchain, server, `http://127.0.0.1:${port}/api/v2`);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.on('close', () => fake.sockets.delete(socket));
    });
    server.on('request', (request, response) => {
      fake.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) fake.send(response, 500, { ok: false, error: `fake toncenter: ${String(error)}`, code: 500 });
      });
    });
    return fake;
  }

  /** Records the transactions of a sandbox send (`await treasury.send(...)`, `blockchain.sendMessage(...)`). */
  record(result: SendMessageResult): SendMessageResult {
    for (const tx of result.transactions) this.addTransaction(tx);
    return result;
  }

  /** Adds a transaction the emulator did not make (a published mainnet BOC), to `account`'s history. */
  addRawTransaction(boc: string, account: Address): Transaction {
    const tx = loadTransaction(Cell.fromBase64(boc).beginParse());
    this.txs.push({ tx, boc, hash: tx.hash(), account: account.toRawString() });
    return tx;
  }

  /** The account's transactions, newest first. */
  transactionsOf(address: Address): Transaction[] {
    return this.history(address).map((s) => s.tx);
  }

  /**
   * Block time (the paying wallet's tests): 0 = sendBoc executes the message at once; > 0 = it
   * answers ok at once and the message executes at the next block, every `blockMs` (a message
   * the contract refuses then — a replay, an expired one — is dropped, as a validator would).
   */
  blockMs = 0;
  /** Called around each block's execution (with blockMs > 0): a test changes the chain there. */
  aroundBlock: { before?: () => Promise<void> | void; after?: () => Promise<void> | void } = {};
  private pending: Cell[] = [];
  private blockTimer: NodeJS.Timeout | undefined;

  /**
   * A regular (non-archival) liteserver's memory: when set, a getTransactions page asked
   * without archival=true that holds a transaction older than this lt fails as a whole with
   * toncenter's 500 "… lt not in db" (toncenter/ton-http-api#79, ton-blockchain/ton#1105).
   * Unset: every request sees the whole history.
   */
  archivalBeforeLt: bigint | undefined = undefined;

  /** Drops every scheduled fault. */
  clearFaults(): void {
    this.faults.length = 0;
  }

  private enqueue(cell: Cell): void {
    this.pending.push(cell);
    this.blockTimer ??= setTimeout(() => {
      this.blockTimer = undefined;
      const block = this.pending;
      this.pending = [];
      void (async () => {
        await this.aroundBlock.before?.();
        for (const message of block) {
          try {
            this.record(await this.blockchain.sendMessage(message));
          } catch {
            // refused by the contract: not included
          }
        }
        await this.aroundBlock.after?.();
      })();
    }, this.blockMs);
  }

  /** The next `times` requests (of `api`, or any) answer with `fault`. */
  fault(fault: Fault, options: { times?: number; api?: string } = {}): void {
    this.faults.push({ api: options.api, fault, remaining: options.times ?? 1 });
  }

  callsTo(api: string): RecordedRequest[] {
    return this.requests.filter((r) => r.api === api);
  }

  async close(): Promise<void> {
    clearTimeout(this.blockTimer);
    for (const response of this.hanging) response.destroy();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private addTransaction(tx: Transaction): void {
    const address = new Address(0, Buffer.from(tx.address.toString(16).padStart(64, '0'), 'hex'));
    // The emulator runs workchain 0 and masterchain accounts; take the workchain from the message.
    const dest = tx.inMessage?.info.dest;
    const account = dest instanceof Address ? dest : address;
    const boc = tx.raw.toBoc().toString('base64');
    this.txs.push({ tx, boc, hash: tx.hash(), account: account.toRawString() });
  }

  private history(address: Address): StoredTx[] {
    const raw = address.toRawString();
    return this.txs.filter((s) => s.account === raw).sort((a, b) => (a.tx.lt < b.tx.lt ? 1 : a.tx.lt > b.tx.lt ? -1 : 0));
  }

  private takeFault(api: string): Fault | undefined {
    const index = this.faults.findIndex((f) => f.api === undefined || f.api === api);
    if (index < 0) return undefined;
    const entry = this.faults[index] as (typeof this.faults)[number];
    if (--entry.remaining <= 0) this.faults.splice(index, 1);
    return entry.fault;
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://fake');
    const match = /^\/api\/v2\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) return this.send(response, 404, { ok: false, error: 'Not Found', code: 404 });
    const apiKey = request.headers['x-api-key'] as string | undefined;
    let api = match[1] as string;
    let params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    let rpcId: unknown;
    if (request.method === 'POST') {
      const body = await readJson(request);
      if (api === 'jsonRPC') {
        api = String(body.method ?? '');
        params = (body.params ?? {}) as Record<string, unknown>;
        rpcId = body.id ?? null;
      } else {
        params = body;
      }
    }
    const fault = this.takeFault(api);
    this.requests.push({ method: request.method ?? 'GET', api, params: stringParams(params), url: request.url ?? '', apiKey, ...(fault && { fault: fault.kind }) });
    const reply = (status: number, body: Record<string, unknown>) => this.send(response, status, rpcId === undefined ? body : { ...body, id: rpcId, jsonrpc: '2.0' });
    if (fault?.kind === 'hang') {
      this.hanging.add(response);
      response.on('close', () => this.hanging.delete(response));
      return;
    }
    if (fault?.kind === 'status') {
      if (fault.retryAfter !== undefined) response.setHeader('retry-after', String(fault.retryAfter));
      return reply(fault.status, { ok: false, error: fault.status === 429 ? 'Ratelimit exceed' : 'Internal Server Error', code: fault.status });
    }
    if (fault?.kind === 'ok_false') return reply(fault.status ?? 200, { ok: false, error: fault.error ?? 'LITE_SERVER_UNKNOWN: fake refusal', code: fault.status ?? 500 });
    try {
      const result = await this.dispatch(api, params, fault);
      reply(200, { ok: true, result });
    } catch (error) {
      if (error instanceof HttpRefusal) return reply(error.status, { ok: false, error: error.message, code: error.status });
      throw error;
    }
  }

  private async dispatch(api: string, params: Record<string, unknown>, fault: Fault | undefined): Promise<unknown> {
    switch (api) {
      case 'getTransactions':
        return this.getTransactions(params, fault);
      case 'getAddressBalance':
        return String((await this.blockchain.getContract(addressParam(params))).balance);
      case 'getAddressInformation':
        return this.addressInformation(addressParam(params));
      case 'getWalletInformation':
        return this.walletInformation(addressParam(params));
      case 'runGetMethod':
        return this.runGetMethod(params);
      case 'sendBoc':
        await this.sendBoc(params);
        return { '@type': 'ok' };
      case 'sendBocReturnHash': {
        const cell = await this.sendBoc(params);
        return { '@type': 'raw.extMessageInfo', hash: cell.hash().toString('base64'), hash_norm: normalizedHash(cell).toString('base64') };
      }
      default:
        throw new HttpRefusal(404, `method ${api} is not served by the fake toncenter`);
    }
  }

  private getTransactions(params: Record<string, unknown>, fault: Fault | undefined): unknown[] {
    const limit = params.limit === undefined ? 10 : Number(params.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new HttpRefusal(422, 'limit: ensure this value is less than or equal to 100');
    const history = this.history(addressParam(params));
    let start = 0;
    if (params.lt !== undefined && params.hash !== undefined && fault?.kind !== 'duplicate_page') {
      const hash = hashParam(String(params.hash));
      start = history.findIndex((s) => s.tx.lt === BigInt(String(params.lt)) && s.hash.equals(hash));
      if (start < 0) throw new HttpRefusal(500, 'LITE_SERVER_UNKNOWN: cannot locate transaction in block with specified logical time');
    }
    if (fault?.kind === 'overlap') start = Math.max(0, start - fault.shift);
    let rows = history.slice(start);
    if (params.to_lt !== undefined && String(params.to_lt) !== '0') rows = rows.filter((s) => s.tx.lt > BigInt(String(params.to_lt)));
    const page = rows.slice(0, limit);
    const archivalOnly = this.archivalBeforeLt;
    if (archivalOnly !== undefined && String(params.archival) !== 'true' && page.some((s) => s.tx.lt < archivalOnly)) {
      throw new HttpRefusal(500, 'LITE_SERVER_UNKNOWN: cannot compute block with specified transaction: lt not in db');
    }
    return page.map(transactionJson);
  }

  private async addressInformation(address: Address) {
    const contract = await this.blockchain.getContract(address);
    const state = contract.accountState;
    const active = state?.type === 'active';
    return {
      '@type': 'raw.fullAccountState',
      balance: String(contract.balance),
      extra_currencies: [],
      code: active && state.state.code ? state.state.code.toBoc().toString('base64') : '',
      data: active && state.state.data ? state.state.data.toBoc().toString('base64') : '',
      last_transaction_id: {
        '@type': 'internal.transactionId',
        lt: String(contract.lastTransactionLt),
        hash: Buffer.from(contract.lastTransactionHash.toString(16).padStart(64, '0'), 'hex').toString('base64'),
      },
      block_id: { '@type': 'ton.blockIdExt', workchain: -1, shard: '-9223372036854775808', seqno: 1, root_hash: '', file_hash: '' },
      frozen_hash: '',
      sync_utime: Math.floor(Date.now() / 1000),
      state: active ? 'active' : state?.type === 'frozen' ? 'frozen' : 'uninitialized',
    };
  }

  private async walletInformation(address: Address) {
    const info = await this.addressInformation(address);
    let seqno: number | undefined;
    if (info.state === 'active') {
      try {
        seqno = (await this.blockchain.runGetMethod(address, 'seqno')).stackReader.readNumber();
      } catch {
        seqno = undefined;
      }
    }
    return {
      '@type': 'ext.wallet.info',
      wallet: seqno !== undefined,
      balance: info.balance,
      account_state: info.state,
      ...(seqno !== undefined && { seqno }),
      last_transaction_id: info.last_transaction_id,
    };
  }

  private async runGetMethod(params: Record<string, unknown>) {
    const address = addressParam(params);
    const method = String(params.method ?? '');
    const contract = await this.blockchain.getContract(address);
    if (contract.accountState?.type !== 'active') return { '@type': 'smc.runResult', gas_used: 0, stack: [], exit_code: -13 };
    try {
      const result = await this.blockchain.runGetMethod(address, method, parseStack(params.stack));
      return { '@type': 'smc.runResult', gas_used: Number(result.gasUsed), stack: result.stack.map(stackItemJson), exit_code: result.exitCode };
    } catch (error) {
      const exitCode = (error as { exitCode?: number }).exitCode;
      if (typeof exitCode === 'number') return { '@type': 'smc.runResult', gas_used: 0, stack: [], exit_code: exitCode };
      throw error;
    }
  }

  /** Executes an external message; a message the contract refuses is a 500 like toncenter's. */
  private async sendBoc(params: Record<string, unknown>): Promise<Cell> {
    let cell: Cell;
    try {
      cell = Cell.fromBase64(String(params.boc ?? ''));
    } catch {
      throw new HttpRefusal(400, 'boc: invalid bag of cells');
    }
    if (this.blockMs > 0) {
      this.enqueue(cell);
      return cell;
    }
    try {
      this.record(await this.blockchain.sendMessage(cell));
    } catch (error) {
      throw new HttpRefusal(500, `LITE_SERVER_UNKNOWN: cannot apply external message to current state : ${error instanceof Error ? error.message.slice(0, 200) : 'refused'}`);
    }
    return cell;
  }

  private send(response: http.ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function stringParams(params: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

function addressParam(params: Record<string, unknown>): Address {
  try {
    return Address.parse(String(params.address ?? ''));
  } catch {
    throw new HttpRefusal(416, 'Incorrect address');
  }
}

/** toncenter takes the hash in hex or base64 (standard or URL-safe). */
function hashParam(text: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  return Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function friendly(address: Address): string {
  return address.toString({ urlSafe: true, bounceable: true });
}

/** A message as toncenter v2 shows it (`raw.message`). */
function messageJson(message: Message | MessageRelaxed) {
  const info = message.info;
  const body = message.body;
  const text = commentText(body);
  const isInternal = info.type === 'internal';
  return {
    '@type': 'raw.message',
    hash: beginCell()
      .store(storeMessage(message as Message))
      .endCell()
      .hash()
      .toString('base64'),
    source: info.type === 'external-in' || !info.src ? '' : friendly(info.src as Address),
    destination: info.type === 'external-out' || !info.dest ? '' : friendly(info.dest as Address),
    value: isInternal ? String(info.value.coins) : '0',
    extra_currencies: [],
    fwd_fee: isInternal ? String(info.forwardFee) : '0',
    ihr_fee: isInternal ? String(info.ihrFee) : '0',
    created_lt: info.type === 'external-in' ? '0' : String(info.createdLt),
    body_hash: body.hash().toString('base64'),
    msg_data:
      text === null
        ? { '@type': 'msg.dataRaw', body: body.toBoc().toString('base64'), init_state: message.init ? beginCell().endCell().toBoc().toString('base64') : '' }
        : { '@type': 'msg.dataText', text: Buffer.from(text, 'utf8').toString('base64') },
    message: text ?? '',
  };
}

function commentText(body: Cell): string | null {
  try {
    const slice = body.beginParse();
    if (slice.remainingBits < 32 || slice.loadUint(32) !== 0) return null;
    return slice.loadStringTail();
  } catch {
    return null;
  }
}

/** A transaction as toncenter v2 getTransactions lists it (`raw.transaction`). */
function transactionJson(stored: StoredTx) {
  const { tx } = stored;
  const storage = tx.description.type === 'generic' ? (tx.description.storagePhase?.storageFeesCollected ?? 0n) : 0n;
  return {
    '@type': 'raw.transaction',
    address: { '@type': 'accountAddress', account_address: friendly(Address.parseRaw(stored.account)) },
    utime: tx.now,
    data: stored.boc,
    transaction_id: { '@type': 'internal.transactionId', lt: String(tx.lt), hash: stored.hash.toString('base64') },
    fee: String(tx.totalFees.coins),
    storage_fee: String(storage),
    other_fee: String(tx.totalFees.coins - storage),
    ...(tx.inMessage && { in_msg: messageJson(tx.inMessage) }),
    out_msgs: tx.outMessages.values().map(messageJson),
  };
}

function parseStack(stack: unknown): TupleItem[] {
  if (!Array.isArray(stack)) return [];
  return stack.map((entry) => {
    const [type, value] = entry as [string, unknown];
    if (type === 'num') return { type: 'int', value: BigInt(String(value)) };
    if (type === 'tvm.Cell' || type === 'cell') return { type: 'cell', cell: Cell.fromBase64(String((value as { bytes?: string }).bytes ?? value)) };
    // toncenter v2's form for a slice argument (get_wallet_address's owner): a BOC in base64.
    if (type === 'tvm.Slice' || type === 'slice') return { type: 'slice', cell: Cell.fromBase64(String((value as { bytes?: string }).bytes ?? value)) };
    throw new HttpRefusal(400, `stack entry type ${type} is not supported by the fake`);
  });
}

function stackItemJson(item: TupleItem): [string, unknown] {
  switch (item.type) {
    case 'int':
      return ['num', `${item.value < 0n ? '-' : ''}0x${(item.value < 0n ? -item.value : item.value).toString(16)}`];
    case 'null':
      return ['null', null];
    case 'cell':
    case 'slice':
    case 'builder':
      return ['cell', { bytes: item.cell.toBoc().toString('base64'), object: {} }];
    default:
      return ['tuple', { '@type': 'tvm.tuple', elements: [] }];
  }
}

/**
 * TEP-467 normalized hash of an external-in message: source none, import fee 0, no init,
 * body as a reference (docs/upstreams.md "Normalized message hash (TEP-467)").
 */
export function normalizedHash(messageCell: Cell): Buffer {
  const message = loadMessage(messageCell.beginParse());
  if (message.info.type !== 'external-in') return messageCell.hash();
  const normalized: Message = { info: { type: 'external-in', src: null, dest: message.info.dest, importFee: 0n }, init: null, body: message.body };
  return beginCell()
    .store(storeMessage(normalized, { forceRef: true }))
    .endCell()
    .hash();
}
