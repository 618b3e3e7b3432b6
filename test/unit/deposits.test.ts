import { Address, beginCell, Cell, comment, type Message, toNano } from '@ton/core';
import { describe, expect, test } from 'vitest';
import { checkCharacter, derivedMemo, isWellFormedMemo, MEMO_ALPHABET, MEMO_PATTERN, normalizeMemo } from '../../src/accounts/deposit-memo.js';
import { classify, decodeTransaction, memoOf, textComment } from '../../src/deposits/classify.js';
import { normalizeTxHash } from '../../src/deposits/settle.js';

/** Memo check character, comment decoding and transaction eligibility on published vectors (ton-org/ton-core, ton-org/docs, ton-community/ton-docs). */
describe('memo check character', () => {
  test('every single substitution and every adjacent transposition is detected, for many memos', () => {
    for (let n = 0; n < 200; n++) {
      const memo = derivedMemo(`acct_${n}`);
      expect(memo).toMatch(MEMO_PATTERN);
      expect(isWellFormedMemo(memo)).toBe(true);
      for (let i = 0; i < memo.length; i++) {
        for (const ch of MEMO_ALPHABET) {
          if (ch === memo[i]) continue;
          expect(isWellFormedMemo(memo.slice(0, i) + ch + memo.slice(i + 1))).toBe(false);
        }
        if (i + 1 < memo.length && memo[i] !== memo[i + 1]) {
          expect(isWellFormedMemo(memo.slice(0, i) + memo[i + 1] + memo[i] + memo.slice(i + 2))).toBe(false);
        }
      }
    }
  });

  test('stable per account, different between accounts; trim and case-fold only', () => {
    expect(derivedMemo('acct_1')).toBe(derivedMemo('acct_1'));
    expect(new Set(Array.from({ length: 1000 }, (_, i) => derivedMemo(`acct_${i}`))).size).toBe(1000);
    const memo = derivedMemo('acct_1');
    expect(memoOf(`\n  ${memo.toLowerCase()} \t`)).toEqual({ ok: true, memo });
    expect(memoOf(`${memo.slice(0, 5)} ${memo.slice(5)}`)).toEqual({ ok: false, reason: 'memo_invalid' });
    expect(memoOf(memo.slice(0, 10))).toEqual({ ok: false, reason: 'memo_invalid' });
    expect(memoOf(null)).toEqual({ ok: false, reason: 'no_comment' });
    expect(memoOf('   ')).toEqual({ ok: false, reason: 'no_comment' });
    expect(normalizeMemo(' abc ')).toBe('ABC');
    expect(checkCharacter('ABCDEFGHJK')).toMatch(/^[A-HJ-NP-Z2-9]$/);
  });
});

describe('comments (V13, V4)', () => {
  test('published comment cells decode to their text; other bodies are not comments', () => {
    expect(textComment(Cell.fromBase64('te6cckEBAQEAEwAAIgAAAABIZWxsbywgd29ybGQhubhNyA=='))).toBe('Hello, world!');
    expect(textComment(Cell.fromBase64('te6cckEBAQEAFQAAJgAAAABTZWEgYnJlZXplIPCfjIqZjg6I'))).toBe('Sea breeze 🌊');
    expect(textComment(Cell.fromBase64('te6cckEBAQEADAAAFAAAAABTZWNvbmTm6HDe'))).toBe('Second');
    // V4: body_hash of the published toncenter rows equals the hash of comment(message).
    expect(comment('Sea breeze 🌊').hash().toString('base64')).toBe('kBfGYBTkBaooeZ+NTVR0EiVGSybxQdb/ifXCRX5O7e0=');
    expect(textComment(new Cell())).toBeNull();
    // An encrypted comment (op 0x2167da4b) is not a text comment.
    expect(textComment(beginCell().storeUint(0x2167da4b, 32).storeStringTail('x').endCell())).toBeNull();
    const long = 'é'.repeat(200);
    expect(textComment(comment(long))).toBe(long);
  });
});

describe('eligibility (V8: a real mainnet wallet transaction)', () => {
  const V8 =
    'te6cckECCgEAAlMAA7V4Pf1VLmNym0cvy8yMRevMZpFwJVi2jsdSfhukA6DzGoAAAU1Ed9DUFmPJqTvOirSq2SKzYQ5GyQgvd9+38bqLQeGJ8YYrkwEwAAFNRGeacBYYzLegADRpVFhoAQIDAgHgBAUAgnKs+GZiNansGUYB+rKGLa25KuWgzm0WaeC5p+NLonoeFBg7+If0w+KZtCRH5Mx+9HCC8Pihk1IvrTPyRowEaTRLAg8MQMYZbXqEQAgJAd+IAQe/qqXMblNo5fl5kYi9eYzSLgSrFtHY6k/DdIB0HmNQB3H/g30bYqz72JAcnKJjRhgkmca92JLgIBGap3csfDt4Jk4S1186lCTQKuGZLHb97aw106oJRO8jslWF11AnUCFNTRi7DGZdIAAAAIAcBgEB3wcAdEIACasmTDZcDR+1HcxuZZBHXmDDvLMcX2Eijok8WCLyCyEwSMJzlQAAAAAAAAAAAAAAAAAAAAAAAAAAvUgBB7+qpcxuU2jl+XmRiL15jNIuBKsW0djqT8N0gHQeY1EABNWTJhsuBo/ajuY3MsgjrzBh3lmOL7CRR0SeLBF5BZCYJGE5yoAABhRYYAAAKaiO+hqEwxmW9AAAAABAAJ1BdkMTiAAAAAAAAAAAEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAG/Jh6EgTBRYQAAAAAAAAgAAAAAAA4SB9Dp1g8lBEAkVf+gygVyC7sUl7wdSG9SEX3iBd2MqQFAXjC98i7E=';
  test('an external-in (our own outgoing order) is never a deposit; its hash is the explorer hash', () => {
    const decoded = decodeTransaction(V8);
    expect(decoded.hash).toBe('e9fb666fd65e2d70479c5a2c2ec412ad08d68fcdf57676b3baa34aada3c95db8');
    expect(decoded.lt).toBe(22901965000001n);
    expect(decoded.utime).toBe(1636617082);
    const account = Address.parse('EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N');
    expect(classify(decoded.tx, account)).toEqual({ kind: 'ignore', why: 'external-in inbound message' });
  });

  test('an incoming transfer that passes every other check but sent a message on is not a deposit: the out message decides', () => {
    const decoded = decodeTransaction(V8);
    const account = Address.parse('EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N');
    // V8 as if its inbound message were a client's transfer with a memo: internal, not bounced,
    // to the account; V8's own description stays (generic, not aborted, compute and action
    // phases successful) and so does its out message (the 10000 TON that left).
    const transfer: Message = {
      info: {
        type: 'internal',
        ihrDisabled: true,
        bounce: false,
        bounced: false,
        src: Address.parse('EQCzQJJBAQ-FrEFcvxO5sNxhV9CaOdK9CCfq2yCBnwZ4aJ9R'),
        dest: account,
        value: { coins: toNano('5') },
        ihrFee: 0n,
        forwardFee: 0n,
        createdLt: decoded.tx.lt - 1n,
        createdAt: decoded.tx.now,
      },
      body: comment(derivedMemo('acct_1')),
    };
    const d = decoded.tx.description;
    expect(d.type === 'generic' && !d.aborted && d.computePhase.type === 'vm' && d.computePhase.success && d.actionPhase?.success).toBe(true);
    expect(decoded.tx.outMessagesCount).toBe(1);
    expect(decoded.tx.outMessages.values()[0]?.info).toMatchObject({ type: 'internal', value: { coins: 10_000_000_000_000n } });
    expect(classify({ ...decoded.tx, inMessage: transfer }, account)).toEqual({ kind: 'ignore', why: 'has outgoing messages' });
    // The same transaction without the out message would be a deposit: that check alone decided.
    expect(classify({ ...decoded.tx, inMessage: transfer, outMessagesCount: 0 }, account)).toMatchObject({ kind: 'deposit', amount: toNano('5'), comment: derivedMemo('acct_1') });
  });

  test('transaction hashes in hex or base64 (V3) normalise to lowercase hex', () => {
    const hex = 'aee8d185a0c8f73c787bf1872ee9659ac53ce11a90b16b384856a7821eff8c29';
    expect(normalizeTxHash(hex.toUpperCase())).toBe(hex);
    expect(normalizeTxHash('rujRhaDI9zx4e_GHLullmsU84RqQsWs4SFangh7_jCk')).toBe(hex);
    expect(normalizeTxHash('rujRhaDI9zx4e/GHLullmsU84RqQsWs4SFangh7/jCk=')).toBe(hex);
    for (const bad of ['', 'abc', `${hex}0`, 'z'.repeat(64)]) expect(normalizeTxHash(bad), bad).toBeUndefined();
  });
});
