import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { requireEndpoint, rotateSecret } from '../../../../webhooks/endpoints.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { EmptyBody } from '../shared.js';
import { ENDPOINT_WITH_SECRET_EXAMPLE, EndpointIdParams, type EndpointWithSecretBody, endpointWithSecret, WebhookEndpointWithSecret } from './endpoint.js';

/** POST /webhook_endpoints/{id}/rotate_secret (docs/api.md "Webhooks"): a new secret, the old one still signing for a grace period. */

const DEFAULT_ROTATION_GRACE_MS = 86_400_000;

const ROTATE_WEBHOOK_SECRET: OperationDoc = {
  operationId: 'rotateWebhookEndpointSecret',
  summary: 'Rotate a webhook signing secret',
  description:
    'Issues a new secret (shown only in this answer). For 24 hours deliveries carry two signatures, one with the new secret and one with the old, ' +
    'so receivers can switch without rejecting anything; rotating again ends the older secret at once. Rotations sent together apply one after the other. ' +
    'Send `{}` as the body.',
  tag: 'Webhooks',
  requestBody: { name: 'RotateWebhookSecretRequest', description: 'No fields: `{}`.', examples: { empty: { value: {} } } },
  success: {
    status: 200,
    description: 'The endpoint with its new secret.',
    schema: WebhookEndpointWithSecret,
    examples: { rotated: { value: ENDPOINT_WITH_SECRET_EXAMPLE } },
  },
  errors: ['webhook_endpoint_not_found'],
};

export function rotateWebhookSecret(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post(
      '/webhook_endpoints/:id/rotate_secret',
      { schema: { params: EndpointIdParams, body: EmptyBody }, config: { openapi: ROTATE_WEBHOOK_SECRET } },
      async (request): Promise<EndpointWithSecretBody> => {
        const endpoint = await requireEndpoint(ctx.db.kysely, request.params.id, request.caller);
        const rotated = await rotateSecret(ctx.db.kysely, endpoint, { now: Date.now(), graceMs: ctx.webhooks?.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS });
        return endpointWithSecret(rotated);
      },
    );
}
