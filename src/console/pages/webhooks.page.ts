import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../../accounts/account-queries';
import { EVENT_STORE, EventStore } from '../../event-store/event-store';
import { ApiError, ConcurrencyConflict } from '../../platform/errors';
import { Streams } from '../../platform/streams';
import { RetryWebhookDeliveryCommand } from '../../webhooks/commands/retry-delivery';
import { DELIVERY_STATUSES, DeliveryLog, DeliveryStatus, OperatorDelivery, STATUS_COUNT_CAP } from '../../webhooks/delivery-log';
import { EndpointQueries, WebhookEndpointView } from '../../webhooks/endpoint-queries';
import { FAN_OUT_GROUP, FAN_OUT_MAX_RETRIES } from '../../webhooks/fan-out';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant } from '../format';
import { Html, html } from '../html';
import { csrfField } from '../layout';
import type { PageRequest } from '../viewer';
import { deliveryTable, eventHref, statusBadge } from './events.page';

const DELIVERIES_PAGE = 25;
const ENDPOINTS_SHOWN = 50;
const PARKED_SHOWN = 50;
/** What of a receiver's answer a page shows: enough to read an error, not a whole page of HTML. */
const BODY_SHOWN = 2000;

const isStatus = (value: string | undefined): value is DeliveryStatus => (DELIVERY_STATUSES as readonly string[]).includes(value ?? '');

/** Where the domain event of a delivery can be read: a purchase names its checkout stream; others are looked for among the newest events. */
function eventLinkOf(d: OperatorDelivery): string {
  try {
    const session = JSON.parse(d.payload)?.data?.purchase?.checkout_session_id;
    if (typeof session === 'string') return eventHref(d.store_event_id, { stream: Streams.checkout(d.mode, session) });
  } catch {
    // A payload is our own JSON; an unreadable one still links by id.
  }
  return eventHref(d.store_event_id);
}

/**
 * Webhooks (operators, in the viewer's mode): endpoints of an account or the newest ones,
 * deliveries by status with their counts, one delivery's attempts and a resend (the operator
 * API's retry command), and the fan-out's persistent subscription group with its parked events,
 * which an operator replays (EventStore.replayParked: handed to the group again, as a first delivery).
 */
@Injectable()
export class WebhooksSection implements ConsoleSection {
  constructor(
    private readonly log: DeliveryLog,
    private readonly endpoints: EndpointQueries,
    private readonly accounts: AccountQueries,
    private readonly commands: CommandBus,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  pages(): ConsolePage[] {
    return [
      { path: '/console/webhooks', title: 'Webhooks', role: 'operator', render: (request) => this.overview(request) },
      { path: '/console/webhooks/deliveries/:id', title: 'Webhook delivery', role: 'operator', render: (request) => this.delivery(request) },
    ];
  }

  actions(): ConsoleAction[] {
    return [
      {
        path: '/console/webhooks/deliveries/:id/resend',
        role: 'operator',
        run: async (request) => {
          // The operator command acts across modes; the console only on the viewer's.
          if (!(await this.log.findInMode(request.viewer.mode, request.param!))) throw new ApiError(404, 'not_found', `No webhook delivery ${request.param} in ${request.viewer.mode} mode.`);
          await this.commands.execute(new RetryWebhookDeliveryCommand(request.param!));
          return { redirect: `/console/webhooks/deliveries/${encodeURIComponent(request.param!)}`, notice: 'delivery-resent' };
        },
      },
      {
        // The group's parked events of every mode: the group is the platform's, and so is its parked list.
        path: '/console/webhooks/replay-parked',
        role: 'operator',
        run: async () => {
          let replayed: number;
          try {
            replayed = await this.store.replayParked(FAN_OUT_GROUP);
          } catch (error) {
            // EventStoreDB runs one replay of a group at a time.
            if (error instanceof ConcurrencyConflict) throw new ApiError(409, 'conflict', `A replay of the parked events of ${FAN_OUT_GROUP} is already under way; look again in a moment.`);
            throw error;
          }
          return { redirect: '/console/webhooks', notice: 'parked-replayed', count: replayed };
        },
      },
    ];
  }

  private async overview(request: PageRequest): Promise<Html> {
    const mode = request.viewer.mode;
    const q = (request.query.account ?? '').trim();
    const status = isStatus(request.query.status) ? request.query.status : undefined;
    const account = q ? await this.accounts.findAccount(q) : undefined;
    const search = html`<form class="filters" method="get" action="/console/webhooks">
<div><label for="account">Account id or slug</label><input id="account" name="account" value="${q}"></div>
<div><label for="status">Deliveries</label><select id="status" name="status"><option value="">every status</option>${DELIVERY_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`)}</select></div>
<button type="submit">Show</button></form>`;
    if (q && !account) return html`${search}<p class="notice error" role="alert">No account is named ${q}.</p>`;
    const accountId = account?.id;
    const [counts, deliveries, endpoints, parked] = await Promise.all([
      this.log.countsByStatus({ mode, accountId }),
      this.log.recent({ mode, accountId, status }, DELIVERIES_PAGE, request.query.cursor || undefined),
      accountId ? this.endpoints.list({ accountId, mode }, ENDPOINTS_SHOWN).then((page) => page.items.map((e) => ({ ...e, account_id: accountId }))) : this.endpoints.recentInMode(mode, ENDPOINTS_SHOWN),
      this.store.parkedEvents(FAN_OUT_GROUP),
    ]);
    const link = (extra: Record<string, string | undefined>) => {
      const params = new URLSearchParams(Object.entries({ account: q || undefined, status, ...extra }).filter((e): e is [string, string] => !!e[1]));
      const text = params.toString();
      return `/console/webhooks${text ? `?${text}` : ''}`;
    };
    return html`${search}
<div class="cards" data-counts>
${DELIVERY_STATUSES.map((s) => html`<a class="card" href="${link({ status: s })}" data-count="${s}"><div class="label">${s}</div><div class="value">${counts[s] > STATUS_COUNT_CAP ? `${count(STATUS_COUNT_CAP)}+` : count(counts[s])}</div></a>`)}
</div>
<h2>Endpoints${account ? html` of ${account.name}` : html` <span class="muted">(newest in ${mode} mode)</span>`}</h2>
${endpointTable(endpoints)}
<h2>Deliveries${status ? html` ${status}` : ''}</h2>
${deliveryTable(deliveries.items)}
${deliveries.has_more ? html`<p><a rel="next" href="${link({ cursor: deliveries.items[deliveries.items.length - 1].id })}">Older deliveries →</a></p>` : ''}
<h2>Fan-out subscription group</h2>
<section class="panel" data-group="${FAN_OUT_GROUP}">
<p><code>${FAN_OUT_GROUP}</code>: the persistent subscription every instance's fan-out joins; it turns public events into deliveries. Parked: <strong data-parked-count>${count(parked.length)}</strong> <span class="muted">(of every mode: the group is the platform's)</span>.</p>
${
  parked.length
    ? html`<table><thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Stream</th><th scope="col">Created</th></tr></thead>
<tbody>${parked.slice(0, PARKED_SHOWN).map((e) => html`<tr data-parked="${e.id}"><td><a href="${eventHref(e.id, { stream: e.streamId, revision: e.revision })}">${e.id}</a></td><td>${e.type}</td><td>${e.streamId}</td><td>${instant(e.createdAt)}</td></tr>`)}</tbody></table>
${parked.length > PARKED_SHOWN ? html`<p class="muted">The oldest ${PARKED_SHOWN} of ${count(parked.length)}.</p>` : ''}
<form class="action" method="post" action="/console/webhooks/replay-parked" data-confirm="Replay ${parked.length === 1 ? 'the parked event' : `the ${count(parked.length)} parked events`} of ${FAN_OUT_GROUP}, of every mode?">${csrfField(request.viewer)}<button type="submit">Replay parked events</button> <span class="muted">Hands them to the fan-out again, as if new (after the cause of their failure is fixed); one that fails ${FAN_OUT_MAX_RETRIES + 1} times more is parked again. <strong data-replay-risk>On EventStoreDB, a replayed event not yet fanned out when a node restarts or fails over is lost</strong> (neither parked nor delivered): replay on a healthy cluster, and note the events above first.</span></form>`
    : html`<p class="muted">No event is parked.</p>`
}
</section>`;
  }

  private async delivery(request: PageRequest): Promise<Html> {
    const mode = request.viewer.mode;
    const found = await this.log.findInMode(mode, request.param!);
    if (!found) throw new ApiError(404, 'not_found', `No webhook delivery ${request.param} in ${mode} mode.`);
    const { delivery: d, attempts } = found;
    return html`<dl class="panel" data-delivery="${d.id}" data-status="${d.status}">
<dt>Status</dt><dd>${statusBadge(d.status)}${d.status === 'pending' && d.next_attempt_at ? html` <span class="muted">next attempt ${instant(d.next_attempt_at)}</span>` : ''}</dd>
<dt>Event</dt><dd>${d.event_type} ${
      d.event_type === 'webhook.test'
        ? html`<code>${d.event_id}</code> <span class="muted">(a test event the endpoint's owner sent; it is not in the event log)</span>`
        : html`<a data-follow="event" href="${eventLinkOf(d)}">${d.event_id}</a>`
    }</dd>
<dt>Endpoint</dt><dd class="url"><code>${d.endpoint_id}</code> ${d.url ?? html`<span class="muted">(deleted)</span>`}</dd>
<dt>Account</dt><dd><a href="/console/webhooks?account=${encodeURIComponent(d.account_id)}">${d.account_id}</a></dd>
<dt>Created</dt><dd>${instant(d.created_at)}</dd>
</dl>
${
  d.status === 'pending' && !(d.next_attempt_at && Date.parse(d.next_attempt_at) > Date.now())
    ? html`<p class="muted">Its attempt is due now or under way.</p>`
    : html`<form method="post" action="/console/webhooks/deliveries/${d.id}/resend" data-confirm="Send ${d.id} ${d.status === 'pending' ? 'now, before its scheduled attempt' : 'again now'}?">${csrfField(request.viewer)}<button type="submit">${d.status === 'pending' ? 'Send now' : 'Resend now'}</button></form>`
}
<h2>Attempts</h2>
${
  attempts.length
    ? html`<table class="panel" data-attempts="${attempts.length}"><thead><tr><th scope="col" class="num">Attempt</th><th scope="col">Started</th><th scope="col">Finished</th><th scope="col">Response</th><th scope="col">Error</th><th scope="col">Response body</th></tr></thead>
<tbody>${attempts.map(
        (a) =>
          html`<tr data-attempt="${a.attempt}"><td class="num">${a.attempt}</td><td>${instant(a.started_at)}</td><td>${a.finished_at ? instant(a.finished_at) : html`<span class="muted">under way or interrupted</span>`}</td><td data-response>${a.response_status ?? '—'}</td><td>${a.error ?? ''}</td><td>${a.response_body ? html`<code>${a.response_body.slice(0, BODY_SHOWN)}</code>` : ''}</td></tr>`,
      )}</tbody></table>`
    : html`<p class="muted">Not attempted yet.</p>`
}
<h2>Payload</h2>
<pre>${prettyJson(d.payload)}</pre>`;
  }
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function endpointTable(endpoints: (WebhookEndpointView & { account_id: string })[]): Html {
  if (!endpoints.length) return html`<p class="muted">No endpoints.</p>`;
  return html`<table class="panel" data-endpoints="${endpoints.length}">
<thead><tr><th scope="col">Endpoint</th><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Account</th><th scope="col">Created</th></tr></thead>
<tbody>${endpoints.map(
    (e) => html`<tr data-endpoint="${e.id}"><td><code>${e.id}</code>${e.description ? html` ${e.description}` : ''}</td><td class="url">${e.url}</td><td>${e.events.join(', ')}</td>
<td>${e.enabled ? html`<span class="badge good">enabled</span>` : html`<span class="badge muted">disabled</span>`}</td><td><a href="/console/webhooks?account=${encodeURIComponent(e.account_id)}">${e.account_id}</a></td><td>${instant(e.created_at)}</td></tr>`,
  )}</tbody></table>`;
}
