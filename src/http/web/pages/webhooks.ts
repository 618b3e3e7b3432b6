import { slug } from '../../../domain/brand.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import { type Mode, MODES } from '../../../domain/api-key.js';
import {
  createEndpoint,
  deleteEndpoint,
  enableEndpoint,
  findEndpoint,
  listEndpoints,
  parseEvents,
  rotateSecret,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpoint,
} from '../../../webhooks/endpoints.js';
import { deliveryLog, enqueueTestEvent, redeliver } from '../../../webhooks/outbox.js';
import { checkWebhookUrl } from '../../../webhooks/sender.js';
import { copyButton, emptyState } from '../components.js';
import { modeLabel, modePath, time } from '../../html/format.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { dashboardAudit } from '../audit.js';

/**
 * Webhooks per mode: add an endpoint (its secret shown once), list, delete, rotate the secret
 * (shown once), send a `webhook.test` event, and a delivery log per endpoint with "redeliver".
 * A disabled endpoint is called out at the top of the page with a re-enable button; until it is
 * re-enabled, "send test event" and "redeliver" refuse (nothing would be sent). Every
 * form posts with the session's CSRF token and answers with a redirect (or a page that shows
 * a secret, which is never put in a URL).
 */

const NOTICES: Record<string, Slot> = {
  deleted: notice('success', 'The endpoint was deleted. Nothing more is sent to it.'),
  test_queued: notice('success', 'A webhook.test event is on its way; it appears in the delivery log below.'),
  redelivering: notice('success', 'The message is being sent again (same webhook-id); the new attempt appears below.'),
  enabled: notice('success', 'The endpoint is enabled again. Messages that were waiting are being sent.'),
  disabled: notice('warning', 'Nothing was sent: this endpoint is disabled. Re-enable the endpoint first, then send or redeliver.'),
  missing: notice('info', 'That endpoint or message no longer exists.'),
};

const ROTATION_GRACE_MS = 86_400_000;

function statusPill(endpoint: WebhookEndpoint): Slot {
  return endpoint.status === 'enabled'
    ? html`<span class="badge badge-delivered" data-status="enabled">Enabled</span>`
    : html`<span class="badge badge-failed" data-status="disabled">Disabled</span>`;
}

function eventsText(events: string[]): string {
  return events.includes('*') ? 'All events' : events.join(', ');
}

function disabledNotice(view: View, endpoint: WebhookEndpoint): Slot {
  return notice(
    'warning',
    html`<strong>Webhook endpoint ${endpoint.url} is disabled</strong>${endpoint.disabledAt ? html` since ${time(endpoint.disabledAt)}` : ''}: ${endpoint.disabledReason ?? 'deliveries kept failing'}
New events are not sent to it. Fix the receiver, then
<form method="post" action="${modePath(view.mode, `/webhooks/${endpoint.id}/enable`)}" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary button-small" data-testid="enable-${endpoint.id}">Re-enable</button></form>`,
  );
}

function addForm(view: View, input: { url?: string; error?: string } = {}): Slot {
  const checkboxes = WEBHOOK_EVENT_TYPES.map((type) => html`<label class="check"><input type="checkbox" name="events" value="${type}"> <code>${type}</code></label>`);
  return html`<section class="card" aria-labelledby="add-heading">
  <h2 id="add-heading">Add an endpoint</h2>
  <form method="post" action="${modePath(view.mode, '/webhooks')}" novalidate>
    ${csrfField(view.csrf)}
    <div class="field">
      <label for="webhook-url">Endpoint URL</label>
      <input id="webhook-url" name="url" type="url" value="${input.url ?? ''}" placeholder="https://example.com/webhooks/${slug(view.brand)}" required${input.error ? html` aria-invalid="true" aria-describedby="url-error"` : ''}>
      ${input.error ? html`<p id="url-error" class="field-error">${input.error}</p>` : ''}
      <p class="hint">${view.mode === 'live' ? 'https:// only, on a public address.' : 'http:// is fine in test mode.'} Events are signed per Standard Webhooks.</p>
    </div>
    <fieldset class="field">
      <legend class="label">Events</legend>
      <p class="hint">Leave all unticked to receive every event.</p>
      <div class="checks">${checkboxes}</div>
    </fieldset>
    <p class="card-actions"><button type="submit" class="button button-primary">Add endpoint</button></p>
  </form>
</section>`;
}

function secretPage(view: View, endpoint: WebhookEndpoint, heading: string, extra: Slot): Slot {
  return html`<div class="page-head"><h1>${heading}</h1></div>
<section class="card new-key-card" aria-labelledby="secret-label">
  ${notice('warning', html`<strong>Copy this signing secret now.</strong> It is shown only once. Use it to verify the <code>webhook-signature</code> header.`)}
  <p>Endpoint <code>${endpoint.url}</code> (${modeLabel(endpoint.mode)} mode)</p>
  <label id="secret-label" for="webhook-secret" class="label">Signing secret</label>
  <div class="copy-field">
    <input id="webhook-secret" class="copy-value mono" type="text" value="${endpoint.secret}" readonly spellcheck="false" autocomplete="off" data-testid="webhook-secret">
    ${copyButton('webhook-secret', 'the signing secret', 'button-primary')}
  </div>
  ${extra}
  <p><a class="button button-secondary" href="${modePath(view.mode, `/webhooks/${endpoint.id}`)}">I have saved it</a></p>
</section>`;
}

export function webhookRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;
  const policy = { allowLoopback: ctx.webhooks?.allowLoopback ?? false, dnsServers: ctx.webhooks?.dnsServers };

  async function listPage(request: FastifyRequest, reply: FastifyReply, mode: Mode, form?: { url?: string; error?: string }) {
    const view = web.view(request, mode);
    const endpoints = await listEndpoints(ctx.db.kysely, { accountId: view.session.accountId, mode });
    const disabled = endpoints.filter((e) => e.status === 'disabled').map((e) => disabledNotice(view, e));
    const rows = endpoints.map(
      (e) => html`<tr data-endpoint="${e.id}">
  <td data-label="URL" class="mono"><a href="${modePath(mode, `/webhooks/${e.id}`)}">${e.url}</a></td>
  <td data-label="Events">${eventsText(e.events)}</td>
  <td data-label="Status">${statusPill(e)}</td>
  <td data-label="Added" class="when">${time(e.createdAt)}</td>
</tr>`,
    );
    const table = endpoints.length
      ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Webhook endpoints"><table class="table">
<caption class="visually-hidden">${modeLabel(mode)} webhook endpoints</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Added</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
      : emptyState('No webhook endpoints yet', `Add one below and ${ctx.brand.name} will POST every ${mode} order event to it, signed and retried for up to 3 days.`);
    const body = html`<div class="page-head"><h1>Webhooks</h1></div>
<p class="lead">Be told when an order changes instead of polling. Deliveries are signed (Standard Webhooks), retried for about 3 days, at least once and in no guaranteed order: deduplicate on <code>webhook-id</code>.</p>
${disabled}
${table}
<div class="section">${addForm(view, form)}</div>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Webhooks', section: 'webhooks', body, notice: NOTICES[field(request.query, 'notice')] }), form?.error ? 400 : 200);
  }

  web.page('/webhooks', (request, reply, mode) => listPage(request, reply, mode));

  web.page('/webhooks/:id', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const endpoint = await findEndpoint(ctx.db.kysely, (request.params as { id: string }).id, { accountId: view.session.accountId, mode });
    if (!endpoint) return redirect(reply, modePath(mode, '/webhooks?notice=missing'));
    const log = await deliveryLog(ctx.db.kysely, endpoint.id);
    const action = (path: string, label: string, className: string, testId: string) =>
      html`<form method="post" action="${modePath(mode, `/webhooks/${endpoint.id}/${path}`)}" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button ${className}" data-testid="${testId}">${label}</button></form>`;
    const rows = log.flatMap(({ message, attempts }) => {
      const redeliverButton = html`<form method="post" action="${modePath(mode, `/webhooks/${endpoint.id}/messages/${message.id}/redeliver`)}" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-quiet button-small" data-testid="redeliver-${message.id}">Redeliver</button></form>`;
      const head = html`<td data-label="Event" class="mono" title="${message.id}">${message.event_type}</td><td data-label="Status"><span class="badge badge-${message.status === 'succeeded' ? 'delivered' : message.status === 'failed' ? 'failed' : 'processing'}">${message.status}</span></td>`;
      if (attempts.length === 0) {
        return [
          html`<tr data-message="${message.id}">${head}<td colspan="5" class="muted" data-label="Attempts">Not sent yet</td><td class="actions">${redeliverButton}</td></tr>`,
        ];
      }
      return attempts.map(
        (a, i) => html`<tr data-message="${message.id}" data-attempt="${Number(a.attempt)}">
  ${i === 0 ? head : html`<td></td><td></td>`}
  <td data-label="Attempt" class="num">${Number(a.attempt)}</td>
  <td data-label="Time" class="when">${time(Number(a.started_at), true)}</td>
  <td data-label="HTTP status" class="num" data-testid="status-code">${a.status_code === null ? '—' : Number(a.status_code)}</td>
  <td data-label="Latency" class="num">${Number(a.duration_ms)} ms</td>
  <td data-label="Response" class="mono snippet" title="${a.response_snippet ?? a.error ?? ''}">${a.error && a.status_code === null ? a.error : (a.response_snippet ?? '')}</td>
  <td class="actions">${i === 0 ? redeliverButton : ''}</td>
</tr>`,
      );
    });
    const logTable = log.length
      ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Delivery log"><table class="table">
<caption class="visually-hidden">Delivery log, newest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Time</th><th scope="col">HTTP status</th><th scope="col">Latency</th><th scope="col">Response</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`
      : emptyState('No deliveries yet', 'Send a test event, or create an order, to see deliveries here.');
    const body = html`<div class="page-head"><h1>Webhook endpoint</h1></div>
${endpoint.status === 'disabled' ? disabledNotice(view, endpoint) : ''}
<section class="card" aria-labelledby="endpoint-heading">
  <div class="card-head"><h2 id="endpoint-heading" class="mono">${endpoint.url}</h2>${statusPill(endpoint)}</div>
  <dl class="details">
    <div><dt>Id</dt><dd><code>${endpoint.id}</code></dd></div>
    <div><dt>Events</dt><dd>${eventsText(endpoint.events)}</dd></div>
    <div><dt>Added</dt><dd>${time(endpoint.createdAt)}</dd></div>
    ${endpoint.previousSecretUntil && endpoint.previousSecretUntil > Date.now() ? html`<div><dt>Old secret</dt><dd>Still signs until ${time(endpoint.previousSecretUntil)}</dd></div>` : ''}
  </dl>
  <div class="card-actions">
    ${action('test', 'Send test event', 'button-primary', 'send-test')}
    ${action('rotate', 'Rotate secret', 'button-secondary', 'rotate')}
    ${action('delete', 'Delete endpoint', 'button-danger', 'delete')}
  </div>
</section>
<section class="section" aria-labelledby="log-heading">
  <div class="section-head">
    <h2 id="log-heading">Delivery log</h2>
    <a href="${modePath(mode, '/webhooks')}">All endpoints</a>
  </div>
  ${logTable}
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Webhook endpoint', section: 'webhooks', body, notice: NOTICES[field(request.query, 'notice')] }));
  });

  for (const mode of MODES) {
    const guarded = { preHandler: [web.authenticated, web.sessionCsrf] };
    const scopeOf = (request: FastifyRequest) => ({ accountId: web.view(request, mode).session.accountId, mode });
    const endpointOf = (request: FastifyRequest) => findEndpoint(ctx.db.kysely, (request.params as { id: string }).id, scopeOf(request));
    const back = (endpoint: WebhookEndpoint, notice: string) => modePath(mode, `/webhooks/${endpoint.id}?notice=${notice}`);
    const gone = modePath(mode, '/webhooks?notice=missing');

    app.post(modePath(mode, '/webhooks'), guarded, async (request, reply) => {
      const view = web.view(request, mode);
      const url = field(request.body, 'url').trim();
      const checked = await checkWebhookUrl(url, mode, policy);
      if ('error' in checked) return listPage(request, reply, mode, { url, error: checked.error });
      const raw = (request.body as Record<string, unknown>).events;
      const picked = raw === undefined ? undefined : Array.isArray(raw) ? raw : [raw];
      let endpoint: WebhookEndpoint;
      try {
        endpoint = await createEndpoint(ctx.db.kysely, scopeOf(request), { url: checked.url, events: parseEvents(picked), now: Date.now() });
      } catch (error) {
        if (error instanceof ApiError) return listPage(request, reply, mode, { url, error: error.message });
        throw error;
      }
      request.log.info({ account_id: view.session.accountId, mode, endpoint_id: endpoint.id }, 'dashboard webhook endpoint added');
      await dashboardAudit(ctx.db.kysely, request, { action: 'webhook.create', session: view.session, mode, details: { endpoint_id: endpoint.id, url: endpoint.url } });
      return sendHtml(reply, dashboardPage(view, { title: 'New webhook endpoint', section: 'webhooks', body: secretPage(view, endpoint, 'Webhook endpoint added', '') }));
    });

    app.post(modePath(mode, '/webhooks/:id/rotate'), guarded, async (request, reply) => {
      const view = web.view(request, mode);
      const endpoint = await endpointOf(request);
      if (!endpoint) return redirect(reply, gone);
      const rotated = await rotateSecret(ctx.db.kysely, endpoint, { now: Date.now(), graceMs: ctx.webhooks?.rotationGraceMs ?? ROTATION_GRACE_MS });
      await dashboardAudit(ctx.db.kysely, request, { action: 'webhook.rotate', session: view.session, mode, details: { endpoint_id: endpoint.id, url: endpoint.url } });
      const extra = rotated.previousSecretUntil
        ? html`<p>The previous secret keeps signing alongside the new one until ${time(rotated.previousSecretUntil)}: switch your receiver before then.</p>`
        : '';
      return sendHtml(reply, dashboardPage(view, { title: 'New signing secret', section: 'webhooks', body: secretPage(view, rotated, 'New signing secret', extra) }));
    });

    app.post(modePath(mode, '/webhooks/:id/delete'), guarded, async (request, reply) => {
      const id = (request.params as { id: string }).id;
      const deleted = await deleteEndpoint(ctx.db.kysely, id, scopeOf(request));
      if (deleted) await dashboardAudit(ctx.db.kysely, request, { action: 'webhook.delete', session: web.view(request, mode).session, mode, details: { endpoint_id: id } });
      return redirect(reply, deleted ? modePath(mode, '/webhooks?notice=deleted') : gone);
    });

    app.post(modePath(mode, '/webhooks/:id/test'), guarded, async (request, reply) => {
      const endpoint = await endpointOf(request);
      if (!endpoint) return redirect(reply, gone);
      // A disabled endpoint's messages wait for a re-enable: say so rather than "on its way".
      if (endpoint.status === 'disabled') return redirect(reply, back(endpoint, 'disabled'));
      await enqueueTestEvent(ctx.db.kysely, endpoint, Date.now());
      return redirect(reply, back(endpoint, 'test_queued'));
    });

    app.post(modePath(mode, '/webhooks/:id/enable'), guarded, async (request, reply) => {
      const endpoint = await endpointOf(request);
      if (!endpoint) return redirect(reply, gone);
      await enableEndpoint(ctx.db.kysely, endpoint, Date.now());
      await dashboardAudit(ctx.db.kysely, request, {
        action: 'webhook.enable',
        session: web.view(request, mode).session,
        mode,
        details: { endpoint_id: endpoint.id, url: endpoint.url },
      });
      return redirect(reply, back(endpoint, 'enabled'));
    });

    app.post(modePath(mode, '/webhooks/:id/messages/:message/redeliver'), guarded, async (request, reply) => {
      const endpoint = await endpointOf(request);
      if (!endpoint) return redirect(reply, gone);
      if (endpoint.status === 'disabled') return redirect(reply, back(endpoint, 'disabled'));
      const ok = await redeliver(ctx.db.kysely, endpoint.id, (request.params as { message: string }).message, Date.now());
      return redirect(reply, back(endpoint, ok ? 'redelivering' : 'missing'));
    });
  }
}
