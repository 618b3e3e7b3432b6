import { type Static, Type } from '@sinclair/typebox';
import { MODES } from '../../../../domain/api-key.js';
import { formatTimestamp } from '../../../../domain/time.js';
import { BALANCE_LOW_EVENT, WEBHOOK_EVENT_TYPES } from '../../../../domain/webhook-events.js';
import type { WebhookEndpoint as StoredEndpoint } from '../../../../webhooks/endpoints.js';
import { Amount, Closed, component, NullableString, OkTrue, OneOf, PublicId, ref, Timestamp } from '../shared.js';

/**
 * A webhook endpoint as the four webhook operations show it (docs/api.md "Webhooks"), and the
 * `balance.low` payload, which the document publishes with them.
 */

const endpointFields = {
  id: PublicId('we', 'Webhook endpoint id.'),
  url: Type.String({ description: 'Where events are POSTed.' }),
  events: Type.Unsafe<string[]>({
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES, '*'] },
    description: 'The event types sent to this endpoint; `["*"]` = all.',
  }),
  mode: OneOf(MODES, { description: 'Only events of this mode (its orders, its balance) are sent.' }),
  status: OneOf(['enabled', 'disabled'] as const, { description: '`disabled` after persistent failure (or a 410 answer); re-enable it in the dashboard.' }),
  disabled_reason: NullableString({ description: 'Why the endpoint was disabled, or `null`.' }),
  created_at: Timestamp(),
};

export const WebhookEndpoint = component('WebhookEndpoint', Closed(endpointFields, 'A webhook endpoint (never with its secret).'));

export const WebhookEndpointWithSecret = component(
  'WebhookEndpointWithSecret',
  Closed(
    {
      ok: OkTrue,
      ...endpointFields,
      secret: Type.String({
        pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
        description: 'The signing secret (Standard Webhooks `whsec_<base64>`). Shown only in this response: store it now.',
      }),
    },
    'A webhook endpoint with its signing secret, as creation and rotation answer it (the only times the secret is shown).',
  ),
);

export type EndpointWithSecretBody = Static<typeof WebhookEndpointWithSecret.schema>;

/** The `balance.low` webhook payload (ledger/low-balance.ts sends it). */
export const BalanceLowEvent = component(
  'BalanceLowEvent',
  Closed(
    {
      id: PublicId('evt', 'Event id.'),
      type: Type.Literal(BALANCE_LOW_EVENT),
      created_at: Timestamp(),
      data: Closed({
        mode: OneOf(MODES, { description: 'The balance that went low.' }),
        available: ref(Amount, { description: 'The available balance right after the movement that took it below the threshold.' }),
        threshold: ref(Amount, { description: 'The low-balance threshold set in the dashboard.' }),
      }),
    },
    '`balance.low` (webhooks only): a movement (an order, an operator debit) took the available balance of `mode` below its low-balance threshold. Sent once per crossing: again only after the balance has been back to or above the threshold (docs/api.md "Low-balance alert").',
  ),
);

export const EndpointIdParams = Type.Object({ id: Type.String({ description: 'Webhook endpoint id, we_…' }) });

/** The wire form of an endpoint, without its secret. */
export function endpointBody(endpoint: StoredEndpoint): Static<typeof WebhookEndpoint.schema> {
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

/** The same with the secret: only creation and rotation show it. */
export const endpointWithSecret = (endpoint: StoredEndpoint): EndpointWithSecretBody => ({ ok: true, ...endpointBody(endpoint), secret: endpoint.secret });

export const ENDPOINT_EXAMPLE: Static<typeof WebhookEndpoint.schema> = {
  id: 'we_3kP9sQ2wE5rT8yU1iOpZxC',
  url: 'https://example.com/webhooks/orders',
  events: ['*'],
  mode: 'test',
  status: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-25T21:30:00.123Z',
};

export const ENDPOINT_WITH_SECRET_EXAMPLE: EndpointWithSecretBody = { ok: true, ...ENDPOINT_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1cSXm2ryq0U=' };
