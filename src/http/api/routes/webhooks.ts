import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import { formatTimestamp } from '../../../domain/time.js';
import { createEndpoint, deleteEndpoint, endpointNotFound, listEndpoints, parseEvents, requireEndpoint, rotateSecret, type WebhookEndpoint } from '../../../webhooks/endpoints.js';
import { checkWebhookUrl } from '../../../webhooks/sender.js';
import type { ApiContext } from '../context.js';
import { CREATE_WEBHOOK_ENDPOINT, DELETE_WEBHOOK_ENDPOINT, LIST_WEBHOOK_ENDPOINTS, ROTATE_WEBHOOK_SECRET } from '../openapi/operations.js';
import { createWebhookEndpointBody, emptyBody, webhookEndpointIdParams } from '../schemas.js';

const DEFAULT_ROTATION_GRACE_MS = 86_400_000;

/** The wire form of an endpoint; the secret only when asked (creation, rotation). */
export function endpointBody(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    mode: endpoint.mode,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    created_at: formatTimestamp(endpoint.createdAt),
  };
}

/** Webhook endpoints of the key's account and mode (extension; docs/api.md "Webhooks"). */
export function webhookRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const policy = { allowLoopback: ctx.webhooks?.allowLoopback ?? false, dnsServers: ctx.webhooks?.dnsServers };

  app.post<{ Body: { url: string; events?: unknown } }>(
    '/webhook_endpoints',
    { schema: { body: createWebhookEndpointBody }, config: { openapi: CREATE_WEBHOOK_ENDPOINT } },
    async (request, reply) => {
      const scope = request.caller;
      const checked = await checkWebhookUrl(request.body.url, scope.mode, policy);
      if ('error' in checked) throw new ApiError('invalid_url', checked.error, 'url');
      const events = parseEvents(request.body.events);
      const endpoint = await createEndpoint(ctx.db.kysely, scope, { url: checked.url, events, now: Date.now() });
      return reply.code(201).send({ ok: true, ...endpointBody(endpoint), secret: endpoint.secret });
    },
  );

  app.get('/webhook_endpoints', { config: { openapi: LIST_WEBHOOK_ENDPOINTS } }, async (request) => {
    const endpoints = await listEndpoints(ctx.db.kysely, request.caller);
    // Shaped like the other lists; never more than MAX_ENDPOINTS_PER_MODE, so always complete.
    return { ok: true, object: 'list', data: endpoints.map(endpointBody), has_more: false };
  });

  app.delete<{ Params: { id: string } }>(
    '/webhook_endpoints/:id',
    { schema: { params: webhookEndpointIdParams }, config: { openapi: DELETE_WEBHOOK_ENDPOINT } },
    async (request) => {
      const { id } = request.params;
      if (!(await deleteEndpoint(ctx.db.kysely, id, request.caller))) throw endpointNotFound(id, request.caller.mode);
      return { ok: true, id, deleted: true };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/webhook_endpoints/:id/rotate_secret',
    { schema: { params: webhookEndpointIdParams, body: emptyBody }, config: { openapi: ROTATE_WEBHOOK_SECRET } },
    async (request) => {
      const endpoint = await requireEndpoint(ctx.db.kysely, request.params.id, request.caller);
      const rotated = await rotateSecret(ctx.db.kysely, endpoint, { now: Date.now(), graceMs: ctx.webhooks?.rotationGraceMs ?? DEFAULT_ROTATION_GRACE_MS });
      return { ok: true, ...endpointBody(rotated), secret: rotated.secret };
    },
  );
}
