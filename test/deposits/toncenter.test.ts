import { beginCell, Cell, external, internal, storeMessage, toNano } from '@ton/core';
import { TonClient, WalletContractV4 } from '@ton/ton';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ToncenterApiError, ToncenterClient, ToncenterError, ToncenterRateLimitError, ToncenterTimeoutError, withRetry } from '../../src/ton/toncenter.js';
import { deployWallet, type TestWallet, transfer } from '../support/ton/chain.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';

/** The toncenter v2 client and its retry policy, against the fake over real HTTP. */
let fake: FakeToncenter;
let wallet: TestWallet;

beforeAll(async () => {
  fake = await FakeToncenter.start();
  wallet = await deployWallet(fake, 'toncenter client suite');
  for (let i = 1; i <= 3; i++) await transfer(fake, { to: wallet.address, value: toNano(String(i)), text: `payment ${i}` });
});
afterAll(async () => fake?.close());

const client = (timeoutMs = 2000) => new ToncenterClient({ baseUrl: fake.url, apiKey: 'secret-key-123', timeoutMs });

describe('getTransactions', () => {
  test('real v2 shapes, newest first, inclusive lt+hash start, key in the header only', async () => {
    const rows = await client().getTransactions(wallet.address.toString(), { limit: 10 });
    expect(rows).toHaveLength(5); // funding, deploy, three payments
    const lts = rows.map((r) => BigInt(r.transaction_id.lt));
    expect([...lts].sort((a, b) => (a > b ? -1 : 1))).toEqual(lts);
    const newest = rows[0];
    expect(newest?.in_msg).toMatchObject({ value: '3000000000', message: 'payment 3', msg_data: { '@type': 'msg.dataText', text: Buffer.from('payment 3').toString('base64') } });
    expect(newest?.out_msgs).toEqual([]);
    const second = rows[1] as (typeof rows)[number];
    const page = await client().getTransactions(wallet.address.toString(), { limit: 2, lt: second.transaction_id.lt, hash: second.transaction_id.hash });
    expect(page.map((r) => r.transaction_id.hash)).toEqual([second.transaction_id.hash, rows[2]?.transaction_id.hash]);
    const request = fake.requests.at(-1);
    expect(request?.apiKey).toBe('secret-key-123');
    expect(request?.url).not.toContain('secret-key-123');
  });

  test('limit above 100 is refused by the server (422), not retried', async () => {
    const before = fake.requests.length;
    const raw = await fetch(`${fake.url}/getTransactions?address=${wallet.address.toString()}&limit=101`);
    expect(raw.status).toBe(422);
    await expect(client().getTransactions(wallet.address.toString(), { limit: 101 })).rejects.toThrow(RangeError);
    expect(fake.requests.length).toBe(before + 1);
  });

  test('@ton/ton TonClient reads the same transactions through jsonRPC', async () => {
    const ton = new TonClient({ endpoint: `${fake.url}/jsonRPC`, apiKey: 'secret-key-123' });
    const txs = await ton.getTransactions(wallet.address, { limit: 10 });
    expect(txs.map((t) => t.hash().toString('base64'))).toEqual((await client().getTransactions(wallet.address.toString(), { limit: 10 })).map((r) => r.transaction_id.hash));
    const state = await ton.getContractState(wallet.address);
    expect(state.state).toBe('active');
    // The wallet's seqno through runGetMethod (deployed with seqno 0, so now 1).
    expect(await ton.open(WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(wallet.secretKey.subarray(32)) })).getSeqno()).toBe(1);
  });
});

describe('sending (for the paying wallet)', () => {
  test('TonClient sends a signed transfer through sendBoc; sendBocReturnHash answers the hashes; replays are refused', async () => {
    const ton = new TonClient({ endpoint: `${fake.url}/jsonRPC` });
    const opened = ton.open(WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(wallet.secretKey.subarray(32)) }));
    const seqno = await opened.getSeqno();
    const payee = (await deployWallet(fake, 'payee')).address;
    await opened.sendTransfer({ seqno, secretKey: wallet.secretKey, messages: [internal({ to: payee, value: toNano('0.5'), body: 'order 1' })] });
    expect(await opened.getSeqno()).toBe(seqno + 1);
    const [outgoing] = fake.transactionsOf(wallet.address);
    expect(outgoing?.inMessage?.info.type).toBe('external-in');
    expect(outgoing?.outMessages.values()[0]?.info.dest?.toString()).toBe(payee.toString());

    // The same order again: the wallet refuses the old seqno, like toncenter answers an unappliable message.
    const transfer2 = opened.createTransfer({ seqno: seqno + 1, secretKey: wallet.secretKey, messages: [internal({ to: payee, value: toNano('0.1') })] });
    const boc = beginCell()
      .store(storeMessage(external({ to: wallet.address, body: transfer2 })))
      .endCell()
      .toBoc()
      .toString('base64');
    const sent = await client().sendBocReturnHash(boc);
    expect(sent.hash).toBe(Cell.fromBase64(boc).hash().toString('base64'));
    expect(sent.hash_norm).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    await expect(client().sendBoc(boc)).rejects.toMatchObject({ status: 500, retryable: true });
    const info = await client().getAddressInformation(wallet.address.toString());
    expect(info.state).toBe('active');
    expect(BigInt(await client().getAddressBalance(wallet.address.toString()))).toBe(BigInt(info.balance));
    const get = await client().runGetMethod(wallet.address.toString(), 'seqno');
    expect(get).toMatchObject({ exit_code: 0, stack: [['num', `0x${(seqno + 2).toString(16)}`]] });
  });
});

describe('errors and retries', () => {
  test('429 (Retry-After), 500 and a timeout are retried with backoff, then the answer comes', async () => {
    fake.fault({ kind: 'status', status: 429, retryAfter: 0 }, { api: 'getTransactions' });
    fake.fault({ kind: 'status', status: 500 }, { api: 'getTransactions' });
    fake.fault({ kind: 'hang' }, { api: 'getTransactions' });
    const retries: string[] = [];
    const rows = await withRetry(() => client(300).getTransactions(wallet.address.toString(), { limit: 1 }), {
      attempts: 4,
      baseDelayMs: 1,
      onRetry: (error) => retries.push(error.constructor.name),
    });
    expect(rows).toHaveLength(1);
    expect(retries).toEqual(['ToncenterRateLimitError', 'ToncenterError', 'ToncenterTimeoutError']);
  });

  test('typed errors: rate limit with Retry-After, timeout, ok:false is definitive', async () => {
    fake.fault({ kind: 'status', status: 429, retryAfter: 7 }, { api: 'getTransactions' });
    const limited = await client()
      .getTransactions(wallet.address.toString(), { limit: 1 })
      .catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ToncenterRateLimitError);
    expect((limited as ToncenterRateLimitError).retryAfterMs).toBe(7000);

    fake.fault({ kind: 'hang' }, { api: 'getTransactions' });
    await expect(client(100).getTransactions(wallet.address.toString(), { limit: 1 })).rejects.toBeInstanceOf(ToncenterTimeoutError);

    fake.fault({ kind: 'ok_false', error: 'LITE_SERVER_UNKNOWN: boom' }, { api: 'getTransactions', times: 2 });
    let calls = 0;
    const refused = await withRetry(
      () => {
        calls++;
        return client().getTransactions(wallet.address.toString(), { limit: 1 });
      },
      { baseDelayMs: 1 },
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ToncenterApiError);
    expect((refused as ToncenterError).retryable).toBe(false);
    expect((refused as Error).message).not.toContain('secret-key-123');
    expect(calls).toBe(1);
    await client()
      .getTransactions(wallet.address.toString(), { limit: 1 })
      .catch(() => undefined); // the second queued fault

    const unreachable = new ToncenterClient({ baseUrl: 'http://127.0.0.1:9/api/v2', timeoutMs: 500 });
    const down = await unreachable.getTransactions(wallet.address.toString(), { limit: 1 }).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(ToncenterError);
    expect((down as ToncenterError).retryable).toBe(true);
  });

  test('retries stop after the attempts allowed', async () => {
    fake.fault({ kind: 'status', status: 503 }, { api: 'getTransactions', times: 3 });
    let calls = 0;
    await expect(
      withRetry(
        () => {
          calls++;
          return client().getTransactions(wallet.address.toString(), { limit: 1 });
        },
        { attempts: 3, baseDelayMs: 1 },
      ),
    ).rejects.toMatchObject({ status: 503 });
    expect(calls).toBe(3);
  });
});
