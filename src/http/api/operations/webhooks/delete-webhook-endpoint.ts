import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { deleteEndpoint, endpointNotFound } from '../../../../webhooks/endpoints.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { component, PublicId, SuccessBody } from '../shared.js';
import { ENDPOINT_EXAMPLE, EndpointIdParams } from './endpoint.js';

/** DELETE /webhook_endpoints/{id} (docs/api.md "Webhooks"): deliveries stop at once. */

const WebhookEndpointDeleted = component(
  'WebhookEndpointDeleted',
  SuccessBody({ id: PublicId('we', 'The deleted endpoint.'), deleted: Type.Literal(true) }, 'The endpoint, its pending messages and its delivery log are gone.'),
);

type Answer = Static<typeof WebhookEndpointDeleted.schema>;

const DELETE_WEBHOOK_ENDPOINT: OperationDoc = {
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete a webhook endpoint',
  description: 'Stops deliveries at once: the endpoint, its undelivered messages and its delivery log are deleted.',
  tag: 'Webhooks',
  success: {
    status: 200,
    description: 'Deleted.',
    schema: WebhookEndpointDeleted,
    examples: { deleted: { value: { ok: true, id: ENDPOINT_EXAMPLE.id, deleted: true } satisfies Answer } },
  },
  errors: ['webhook_endpoint_not_found'],
};

export function deleteWebhookEndpoint(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .delete('/webhook_endpoints/:id', { schema: { params: EndpointIdParams }, config: { openapi: DELETE_WEBHOOK_ENDPOINT } }, async (request): Promise<Answer> => {
      const { id } = request.params;
      if (!(await deleteEndpoint(ctx.db.kysely, id, request.caller))) throw endpointNotFound(id, request.caller.mode);
      return { ok: true, id, deleted: true };
    });
}
