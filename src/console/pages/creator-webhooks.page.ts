import { Injectable } from '@nestjs/common';
import { Errors } from '../../platform/errors';
import { DeliveryLog, DeliveryLogEntry } from '../../webhooks/delivery-log';
import { EndpointQueries } from '../../webhooks/endpoint-queries';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { instant } from '../format';
import { Html, html } from '../html';
import type { PageRequest } from '../viewer';

/** The API's largest page of endpoints: an account has a handful. */
const ENDPOINT_ROWS = 100;
const DELIVERY_ROWS = 25;

const DELIVERY_TONE: Record<DeliveryLogEntry['status'], string> = { pending: 'muted', succeeded: 'good', failed: 'bad' };

/**
 * A creator's webhook endpoints (scope webhooks:write, as the /v1/webhook_endpoints routes):
 * each endpoint (never its secret) and the recent deliveries to one of them, with status,
 * attempts and the last response. The same EndpointQueries and DeliveryLog as the API; an
 * endpoint that is not the key's account's, in its mode, is 404.
 */
@Injectable()
export class CreatorWebhooksSection implements ConsoleSection {
  constructor(
    private readonly endpoints: EndpointQueries,
    private readonly log: DeliveryLog,
  ) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/my-webhooks', title: 'Webhooks', role: 'creator', scopes: ['webhooks:write'], render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async render(request: PageRequest): Promise<Html> {
    const auth = request.viewer.auth!;
    const { endpoint: asked, cursor } = request.query;
    const list = await this.endpoints.list(auth, ENDPOINT_ROWS);
    // Looked up on its own, not in the list: one beyond the first page is still the owner's.
    const chosen = asked ? await this.endpoints.find(auth, asked) : list.items[0];
    if (asked && !chosen) throw Errors.notFound('webhook endpoint');
    const deliveries = chosen && (await this.log.list(chosen.id, DELIVERY_ROWS, cursor || undefined));
    const next = chosen && deliveries?.next_cursor ? `/console/my-webhooks?${new URLSearchParams({ endpoint: chosen.id, cursor: deliveries.next_cursor })}` : undefined;
    return html`<table class="panel" data-rows="${list.items.length}">
<caption>Endpoints</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Deliveries</th></tr></thead>
<tbody>${list.items.map(
      (e) => html`<tr data-endpoint="${e.id}"${e.id === chosen?.id ? html` aria-current="true"` : ''}><td class="url"><code>${e.url}</code>${e.description ? html`<div class="muted">${e.description}</div>` : ''}<div class="muted"><code>${e.id}</code></div></td><td>${
        e.events.length ? e.events.join(', ') : html`<span class="muted">none</span>`
      }</td><td>${e.enabled ? html`<span class="badge good">enabled</span>` : html`<span class="badge muted">disabled</span>`}</td><td>${instant(e.created_at)}</td><td>${
        e.id === chosen?.id ? html`<strong>shown below</strong>` : html`<a href="/console/my-webhooks?${new URLSearchParams({ endpoint: e.id })}">Show deliveries</a>`
      }</td></tr>`,
    )}</tbody></table>
${list.items.length ? '' : html`<p class="muted">No webhook endpoint in ${auth.mode} mode: add one with POST /v1/webhook_endpoints (or <code>svc webhooks listen</code> while developing).</p>`}
${list.has_more ? html`<p class="muted">The first ${ENDPOINT_ROWS} endpoints are listed.</p>` : ''}
${
  chosen && deliveries
    ? html`<h2 class="url">Deliveries to <code>${chosen.url}</code></h2>
<table class="panel" data-deliveries="${deliveries.items.length}">
<caption class="visually-hidden">Deliveries, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Response</th><th scope="col">Error</th><th scope="col">Next attempt</th></tr></thead>
<tbody>${deliveries.items.map(
        (d) => html`<tr data-delivery="${d.id}"><td>${instant(d.created_at)}</td><td>${d.event_type}<div class="muted"><code>${d.event_id}</code></div></td><td><span class="badge ${DELIVERY_TONE[d.status]}">${d.status}</span></td><td class="num" data-attempts>${d.attempts}</td><td class="num">${d.response_status ?? '—'}</td><td>${d.error ?? ''}</td><td>${instant(d.next_attempt_at)}</td></tr>`,
      )}</tbody></table>
${deliveries.items.length ? '' : html`<p class="muted">Nothing delivered to this endpoint yet.</p>`}
${next ? html`<p><a href="${next}">Older deliveries</a></p>` : ''}`
    : ''
}`;
  }
}
