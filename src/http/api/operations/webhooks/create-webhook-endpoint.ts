import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';
import { createEndpoint, parseEvents } from '../../../../webhooks/endpoints.js';
import { checkWebhookUrl } from '../../../../webhooks/sender.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { BalanceLowEvent, ENDPOINT_WITH_SECRET_EXAMPLE, type EndpointWithSecretBody, endpointWithSecret, WebhookEndpointWithSecret } from './endpoint.js';

/**
 * POST /webhook_endpoints (docs/api.md "Webhooks"). `events` is checked by parseEvents, not
 * the schema, so that every bad list (a string, `[1]`, an unknown type) is invalid_events.
 */

const CreateWebhookEndpointBody = Type.Object(
  {
    url: Type.String({
      description: 'Where to POST events: https:// (plain http:// only in test mode), a public address, at most 2048 characters.',
      examples: ['https://example.com/webhooks/orders'],
    }),
    events: Type.Optional(
      Type.Unsafe<unknown>({
        type: 'array',
        items: { type: 'string' },
        description: 'Event types to receive (`order.created`, `order.delivered`, …, `balance.low`), or `["*"]` for all (the default).',
        examples: [['order.delivered', 'order.failed']],
      }),
    ),
  },
  { additionalProperties: false },
);

const CREATE_WEBHOOK_ENDPOINT: OperationDoc = {
  operationId: 'createWebhookEndpoint',
  summary: 'Add a webhook endpoint',
  description:
    'Events of the key’s mode are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
    'The answer carries the signing `secret`: it is shown only here (and on rotation). Live endpoints must be https:// and resolve to public addresses ' +
    '(a host name within 5 seconds); at most 16 endpoints per mode. At most 2 deliveries are in flight to one endpoint at a time.',
  tag: 'Webhooks',
  requestBody: {
    name: 'CreateWebhookEndpointRequest',
    description: '`events` defaults to `["*"]` (every order event).',
    examples: {
      all: { summary: 'Every event', value: { url: 'https://example.com/webhooks/orders' } },
      final: { summary: 'Final states only', value: { url: 'https://example.com/webhooks/orders', events: ['order.delivered', 'order.failed'] } },
    },
  },
  success: {
    status: 201,
    description: 'The endpoint, with its secret (shown once).',
    schema: WebhookEndpointWithSecret,
    examples: { created: { value: ENDPOINT_WITH_SECRET_EXAMPLE } },
  },
  errors: ['invalid_url', 'invalid_events', 'webhook_endpoint_limit'],
  publishes: [BalanceLowEvent],
};

export function createWebhookEndpoint(app: FastifyInstance, ctx: ApiContext): void {
  const policy = { allowLoopback: ctx.webhooks?.allowLoopback ?? false, dnsServers: ctx.webhooks?.dnsServers };
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post('/webhook_endpoints', { schema: { body: CreateWebhookEndpointBody }, config: { openapi: CREATE_WEBHOOK_ENDPOINT } }, async (request, reply) => {
      const scope = request.caller;
      const checked = await checkWebhookUrl(request.body.url, scope.mode, policy);
      if ('error' in checked) throw new ApiError('invalid_url', checked.error, 'url');
      const events = parseEvents(request.body.events);
      const endpoint = await createEndpoint(ctx.db.kysely, scope, { url: checked.url, events, now: Date.now() });
      const answer: EndpointWithSecretBody = endpointWithSecret(endpoint);
      return reply.code(201).send(answer);
    });
}
