import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { depositMemo } from '../../../../accounts/deposit-memo.js';
import { ApiError } from '../../../../domain/api-error.js';
import { DEFAULT_BRAND_NAME } from '../../../../domain/brand.js';
import { transferLink } from '../../../../ton/transfer-link.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { component, OneOf, SuccessBody } from '../shared.js';
import { requireLiveKey } from './live-only.js';

/** GET /deposit_address (docs/api.md "GET /deposit_address"): where to send TON for a live top-up. */

const DepositAddress = component(
  'DepositAddress',
  SuccessBody(
    {
      address: Type.String({ description: 'The service’s deposit wallet, user-friendly non-bounceable form (`UQ…`; `0Q…` on testnet).' }),
      memo: Type.String({
        pattern: '^[A-HJ-NP-Z2-9]{11}$',
        description: 'Your personal comment: 10 characters and a check character. Case and surrounding spaces do not matter.',
      }),
      network: OneOf(['mainnet', 'testnet'] as const),
      transfer_link: Type.String({ pattern: '^ton://transfer/', description: '`ton://transfer/<address>?text=<memo>`.' }),
    },
    'Where and how to send TON for a live top-up.',
  ),
);

type Answer = Static<typeof DepositAddress.schema>;

const EXAMPLE: Answer = {
  ok: true,
  address: 'UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E',
  memo: 'K7QM3ZP8WD9',
  network: 'mainnet',
  transfer_link: 'ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?text=K7QM3ZP8WD9',
};

const GET_DEPOSIT_ADDRESS: OperationDoc = {
  operationId: 'getDepositAddress',
  summary: 'Get the deposit address',
  description:
    'Where to send TON to top up your live balance: the service wallet `address` and your personal `memo`, which must be the transfer’s ' +
    'comment (it is the same for every top-up). `transfer_link` is a `ton://transfer` link wallet apps open. Live keys only; ' +
    '503 `live_unavailable` while live top-ups are not configured.',
  tag: 'Deposits',
  success: { status: 200, description: 'The deposit address and your memo.', schema: DepositAddress, examples: { address: { value: EXAMPLE } } },
  errors: ['live_key_required', 'live_unavailable'],
};

export function getDepositAddress(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/deposit_address', { preValidation: requireLiveKey, config: { openapi: GET_DEPOSIT_ADDRESS } }, async (request): Promise<Answer> => {
      if (!ctx.deposits) throw new ApiError('live_unavailable', `Live top-ups are not configured on this ${ctx.brand?.name ?? DEFAULT_BRAND_NAME} installation.`);
      const memo = await depositMemo(ctx.db, request.caller.accountId);
      return {
        ok: true,
        address: ctx.deposits.address,
        memo,
        network: ctx.deposits.network,
        transfer_link: transferLink(ctx.deposits.address, memo, undefined),
      };
    });
}
