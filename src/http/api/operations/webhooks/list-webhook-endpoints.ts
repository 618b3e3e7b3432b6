import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { listEndpoints } from '../../../../webhooks/endpoints.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { component, listOf } from '../shared.js';
import { ENDPOINT_EXAMPLE, endpointBody, WebhookEndpoint } from './endpoint.js';

/** GET /webhook_endpoints (docs/api.md "Webhooks"): every endpoint of the key's mode, never their secrets. */

const WebhookEndpointList = component(
  'WebhookEndpointList',
  listOf(WebhookEndpoint, 'All the webhook endpoints of the key’s mode.', {
    data: 'Oldest first; at most 16.',
    hasMore: Type.Literal(false, { description: 'Always `false`: a mode has at most 16 endpoints, so the list is always complete (no paging).' }),
  }),
);

type Answer = Static<typeof WebhookEndpointList.schema>;

const LIST_WEBHOOK_ENDPOINTS: OperationDoc = {
  operationId: 'listWebhookEndpoints',
  summary: 'List webhook endpoints',
  description:
    'All the endpoints of the key’s mode, oldest first, shaped like the other lists; `has_more` is always `false` (at most 16 endpoints per mode). Secrets are never listed.',
  tag: 'Webhooks',
  success: {
    status: 200,
    description: 'The endpoints.',
    schema: WebhookEndpointList,
    examples: { one: { value: { ok: true, object: 'list', data: [ENDPOINT_EXAMPLE], has_more: false } satisfies Answer } },
  },
  errors: [],
};

export function listWebhookEndpoints(app: FastifyInstance, ctx: ApiContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/webhook_endpoints', { config: { openapi: LIST_WEBHOOK_ENDPOINTS } }, async (request): Promise<Answer> => {
    const endpoints = await listEndpoints(ctx.db.kysely, request.caller);
    // Never more than MAX_ENDPOINTS_PER_MODE, so always complete.
    return { ok: true, object: 'list', data: endpoints.map(endpointBody), has_more: false };
  });
}
