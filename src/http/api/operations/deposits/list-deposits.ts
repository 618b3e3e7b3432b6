import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { findDeposit, listDeposits as listDepositsOfAccount } from '../../../../deposits/store.js';
import { CLIENT_DEPOSIT_STATUSES, depositWire } from '../../../../deposits/wire.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { parseLimit, unknownCursor } from '../../pagination.js';
import { Amount, Closed, component, ForwardListQuery, listOf, NullableTimestamp, OneOf, PublicId, ref, Timestamp } from '../shared.js';
import { requireLiveKey } from './live-only.js';

/**
 * GET /deposits (docs/api.md "GET /deposits"): the TON and USDT transfers credited to the
 * account's live balance, newest first, paged forwards. deposits/wire.ts writes each deposit.
 */

const ListDepositsQuery = ForwardListQuery();

const UsdtConversion = Closed(
  {
    amount: Type.String({ pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{0,5}[1-9])?$', description: 'The USDT that arrived (6 decimals at most).' }),
    rate: Type.Unsafe<string | null>({
      type: ['string', 'null'],
      pattern: '^[0-9]+(\\.[0-9]+)?$',
      description: 'USD per TON it was converted at (USDT taken at 1 USD), before the spread; `null` while `awaiting_rate`.',
    }),
    rate_at: NullableTimestamp('When the rate feed had that rate; `null` while `awaiting_rate`.'),
  },
  'A USDT deposit: the amount and the conversion.',
);

const Deposit = component(
  'Deposit',
  Closed(
    {
      id: PublicId('dep', 'Deposit id: the `starting_after` cursor.'),
      asset: OneOf(['TON', 'USDT'] as const, { description: 'What was sent: TON, or USDT (the TON jetton), converted to TON when credited.' }),
      amount: Type.Unsafe<Static<typeof Amount.schema> | null>({
        oneOf: [{ type: 'null' }, ref(Amount)],
        description: 'The TON credited, to the nanoton: for TON what arrived, for USDT the converted amount. `null` while `awaiting_rate`.',
      }),
      usdt: Type.Unsafe<Static<typeof UsdtConversion> | null>({
        oneOf: [{ type: 'null' }, UsdtConversion],
        description: 'For a USDT deposit the USDT amount and its rate; `null` for TON.',
      }),
      status: OneOf(CLIENT_DEPOSIT_STATUSES, {
        description: '`credited`: added to your live balance. `awaiting_rate`: a USDT deposit for you that is credited as soon as a fresh TON/USD rate exists, at that rate.',
      }),
      tx_hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The transaction hash (hex), as explorers show it.' }),
      sender: Type.String({ description: 'The sending wallet, user-friendly form.' }),
      created_at: Timestamp({ description: 'Block time of the transfer.' }),
      credited_at: NullableTimestamp('When your balance was credited; `null` while `awaiting_rate`.'),
      explorer_url: Type.String({ format: 'uri', description: 'The transaction on tonviewer.' }),
    },
    'A TON or USDT transfer to your live balance.',
  ),
);

const DepositList = component('DepositList', listOf(Deposit, 'A page of deposits.'));

type Answer = Static<typeof DepositList.schema>;

const SENDER = 'EQCzQJJBAQ-FrEFcvxO5sNxhV9CaOdK9CCfq2yCBnwZ4aJ9R';
const EXAMPLE: Answer = {
  ok: true,
  object: 'list',
  data: [
    {
      id: 'dep_4Lw8Rt2nQ6xZ0cV3bM9kPs',
      asset: 'USDT',
      amount: { value: '9.9', currency: 'TON' },
      usdt: { amount: '25', rate: '2.5', rate_at: '2026-11-25T21:31:02.118Z' },
      status: 'credited',
      tx_hash: '5f0c2e9a7d41b8c3e6f5a9d2c1b0e4f7a8d3c6b9e2f1a0d5c4b7e8f9a6d3c2b1',
      sender: SENDER,
      created_at: '2026-11-25T21:31:00.000Z',
      credited_at: '2026-11-25T21:31:02.120Z',
      explorer_url: 'https://tonviewer.com/transaction/5f0c2e9a7d41b8c3e6f5a9d2c1b0e4f7a8d3c6b9e2f1a0d5c4b7e8f9a6d3c2b1',
    },
    {
      id: 'dep_9fK2mQ7xV1bN4cL8sR3tYw',
      asset: 'TON',
      amount: { value: '25', currency: 'TON' },
      usdt: null,
      status: 'credited',
      tx_hash: 'aee8d185a0c8f73c787bf1872ee9659ac53ce11a90b16b384856a7821eff8c29',
      sender: SENDER,
      created_at: '2026-11-25T21:29:51.000Z',
      credited_at: '2026-11-25T21:29:56.412Z',
      explorer_url: 'https://tonviewer.com/transaction/aee8d185a0c8f73c787bf1872ee9659ac53ce11a90b16b384856a7821eff8c29',
    },
  ],
  has_more: false,
};

const LIST_DEPOSITS: OperationDoc = {
  operationId: 'listDeposits',
  summary: 'List deposits',
  description:
    'The TON transfers credited to your live balance, newest first. Cursor pagination: `limit` (1–100, default 20) and `starting_after` ' +
    '(the last `id` of the previous page); `has_more` says whether there are more. Live keys only. A transfer that could not be matched to ' +
    'your account (no or mistyped memo, below the minimum) appears here once the operator has assigned it to you.',
  tag: 'Deposits',
  success: { status: 200, description: 'A page of deposits.', schema: DepositList, examples: { page: { summary: 'One deposit', value: EXAMPLE } } },
  errors: ['live_key_required'],
};

export function listDeposits(app: FastifyInstance, ctx: ApiContext): void {
  const network = ctx.deposits?.network ?? 'mainnet';
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/deposits', { schema: { querystring: ListDepositsQuery }, preValidation: requireLiveKey, config: { openapi: LIST_DEPOSITS } }, async (request): Promise<Answer> => {
      const limit = parseLimit(request.query.limit);
      const accountId = request.caller.accountId;
      let startingAfter: { lt: bigint; id: string } | undefined;
      if (request.query.starting_after !== undefined) {
        const anchor = await findDeposit(ctx.db.kysely, { id: request.query.starting_after, accountId });
        if (!anchor) throw unknownCursor('starting_after', request.query.starting_after, 'one of your deposits');
        startingAfter = { lt: anchor.lt, id: anchor.id };
      }
      const rows = await listDepositsOfAccount(ctx.db.kysely, { accountId, status: CLIENT_DEPOSIT_STATUSES, startingAfter, limit: limit + 1 });
      return { ok: true, object: 'list', data: rows.slice(0, limit).map((d) => depositWire(d, network)), has_more: rows.length > limit };
    });
}
