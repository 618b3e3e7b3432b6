import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { parseUsername } from '../../../../domain/username.js';
import { checkRecipient, liveChecksUnavailable } from '../../../../providers/recipient-check.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { Closed, component, ProductName, QUANTITY_BY_PRODUCT, Quantity, Recipient, SuccessBody } from '../shared.js';

/**
 * POST /recipients/validate (docs/api.md "POST /recipients/validate"): whether a username can
 * receive the product, without reserving anything. Refusals are 400 `recipient_invalid` with
 * `details.reason` (providers/recipient-check.ts).
 */

export const ValidateRecipientBody = Type.Object(
  { product: ProductName({ description: 'What to buy.', examples: ['stars'] }), recipient: Recipient, quantity: Quantity },
  { additionalProperties: false, allOf: QUANTITY_BY_PRODUCT },
);

const RecipientValidation = component(
  'RecipientValidation',
  SuccessBody(
    {
      recipient: Closed({
        username: Type.String({ description: 'Without `@`.' }),
        display_name: Type.String(),
        eligible: Type.Boolean({ description: 'Always `true` in a 200 (an ineligible recipient is a 400 `recipient_invalid`).' }),
      }),
    },
    'The recipient exists and can receive the product.',
  ),
);

type Answer = Static<typeof RecipientValidation.schema>;

const EXAMPLE: Answer = { ok: true, recipient: { username: 'durov', display_name: 'Pavel Durov', eligible: true } };

const VALIDATE_RECIPIENT: OperationDoc = {
  operationId: 'validateRecipient',
  summary: 'Check a recipient',
  description:
    'Answers 200 only when the username exists and can receive the product; otherwise 400 `recipient_invalid`, whose `details.reason` says why ' +
    '(`not_found`, `not_a_user`, `already_premium`, `not_eligible`). Nothing is reserved or charged. ' +
    'In test mode `@test_invalid` and `@test_not_found` are not found, `@test_not_a_user`, `@test_already_premium` (premium only) and `@test_not_eligible` are refused for that reason, ' +
    'and every other well-formed username is eligible.',
  tag: 'Recipients',
  requestBody: {
    name: 'ValidateRecipientRequest',
    description: 'The same product and quantity rules as POST /orders.',
    examples: { stars: { summary: '50 Stars for @durov', value: { product: 'stars', recipient: '@durov', quantity: 50 } } },
  },
  success: { status: 200, description: 'The recipient can receive the product.', schema: RecipientValidation, examples: { eligible: { value: EXAMPLE } } },
  errors: ['invalid_product', 'recipient_invalid', 'invalid_quantity', 'live_unavailable'],
};

export function validateRecipient(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post('/recipients/validate', { schema: { body: ValidateRecipientBody }, config: { openapi: VALIDATE_RECIPIENT } }, async (request): Promise<Answer> => {
      const { product, quantity } = request.body;
      const username = parseUsername(request.body.recipient) as string;
      const directory = ctx.directories[request.caller.mode];
      if (!directory) throw liveChecksUnavailable();
      // Refusals (400 recipient_invalid with details.reason) and 503 come from checkRecipient.
      const found = await checkRecipient(directory, username, product, quantity);
      return { ok: true, recipient: { username: found.username, display_name: found.displayName, eligible: true } };
    });
}
