import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, parsePosition, Position, RecordedEvent, START } from '../../event-store/event-store';
import { JournalQueries } from '../../ledger/journal-queries';
import { ApiError } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { DeliveryLog, OperatorDelivery } from '../../webhooks/delivery-log';
import { ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant, money } from '../format';
import { Html, html } from '../html';
import type { PageRequest } from '../viewer';

/** Events shown on one page of the log or of a stream. */
const PAGE = 50;
/** Events read for one page of a filtered log: a filter that matches few still reads at most this many. */
const WINDOW = 500;
/** How far back an event opened by its id alone (no stream, no position) is looked for. */
const RECENT = 2000;

const notFound = (message: string) => new ApiError(404, 'not_found', message);

/** The mode an event is about, when its data names one; events without one belong to both. */
function modeOf(event: RecordedEvent): string | undefined {
  const mode = event.data?.mode;
  return typeof mode === 'string' ? mode : undefined;
}

const visibleIn = (mode: Mode) => (event: RecordedEvent) => (modeOf(event) ?? mode) === mode;

function validPosition(value: string | undefined): Position | undefined {
  if (!value) return undefined;
  try {
    parsePosition(value);
    return value;
  } catch {
    throw new ConsoleInputError(`"${value}" is not an event store position.`);
  }
}

function validTime(value: string | undefined, what: string): Date | undefined {
  if (!value) return undefined;
  // datetime-local sends no zone: the console speaks UTC everywhere.
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  if (Number.isNaN(date.getTime())) throw new ConsoleInputError(`The ${what} time "${value}" is not a date and time.`);
  return date;
}

function query(params: Record<string, string | undefined>): string {
  const given = Object.entries(params).filter((entry): entry is [string, string] => !!entry[1]);
  return given.length ? `?${new URLSearchParams(given).toString()}` : '';
}

/** Where an event can be read again: by its stream and revision (one read), or its position (two). */
export function eventHref(id: string, where: { stream?: string; revision?: number; at?: Position } = {}): string {
  return `/console/events/${encodeURIComponent(id)}${query({ stream: where.stream, revision: where.revision === undefined ? undefined : String(where.revision), at: where.at })}`;
}

export const streamHref = (stream: string) => `/console/streams/${encodeURIComponent(stream)}`;

/**
 * The event log (operators): the global log newest first, filtered by type and time, one
 * stream, and one event with its data, metadata and position; from a purchase to its sale,
 * its journal postings and its webhook deliveries. Everything is read through the
 * EventStore port (both adapters), a bounded number of events a page (docs/decisions.md).
 */
@Injectable()
export class EventsSection implements ConsoleSection {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly journal: JournalQueries,
    private readonly deliveries: DeliveryLog,
  ) {}

  pages(): ConsolePage[] {
    return [
      { path: '/console/events', title: 'Event log', role: 'operator', render: (request) => this.log(request) },
      { path: '/console/events/:id', title: 'Event', role: 'operator', render: (request) => this.event(request) },
      { path: '/console/streams/:id', title: 'Stream', role: 'operator', render: (request) => this.stream(request) },
    ];
  }

  actions() {
    return [];
  }

  private async log(request: PageRequest): Promise<Html> {
    const q = request.query;
    const type = (q.type ?? '').trim();
    const from = validTime(q.from, 'from');
    const to = validTime(q.to, 'to');
    const before = validPosition(q.before);
    const filtered = !!(type || from || to);
    const form = html`<form class="filters" method="get" action="/console/events">
<div><label for="type">Event type</label><input id="type" name="type" value="${type}" placeholder="PurchaseCompleted (any case)"></div>
<div><label for="from">From (UTC)</label><input id="from" name="from" type="datetime-local" step="1" value="${q.from ?? ''}"></div>
<div><label for="to">To (UTC)</label><input id="to" name="to" type="datetime-local" step="1" value="${q.to ?? ''}"></div>
<button type="submit">Filter</button>${filtered || before ? html` <a href="/console/events">Newest, unfiltered</a>` : ''}
</form>`;

    // Newest first, backwards from the cursor: one bounded read whatever the filter.
    const read = await this.store.readAllBackward({ before, limit: filtered ? WINDOW : PAGE + 1 });
    const full = read.length === (filtered ? WINDOW : PAGE + 1);
    const matches: RecordedEvent[] = [];
    let reachedFrom = false;
    for (const event of read) {
      if (from && event.createdAt < from) {
        reachedFrom = true;
        break;
      }
      if (!visibleIn(request.viewer.mode)(event)) continue;
      if (type && event.type.toLowerCase() !== type.toLowerCase()) continue;
      if (to && event.createdAt >= to) continue;
      matches.push(event);
    }
    const shown = matches.slice(0, PAGE);
    // The next page starts below the last event shown, or, when the window ran out first, below the window.
    let next: Position | undefined;
    if (matches.length > PAGE) next = shown[shown.length - 1].position;
    else if (full && !reachedFrom) next = filtered ? read[read.length - 1].position : shown[shown.length - 1]?.position;
    const older = next ? html`<p><a rel="next" data-older href="/console/events${query({ type: type || undefined, from: q.from, to: q.to, before: next })}">Older events →</a></p>` : '';

    if (!shown.length) {
      const why = !read.length
        ? html`<p class="muted">The log has no events${before ? ' before this position' : ''}.</p>`
        : html`<p class="notice" role="status" data-window-empty>No event in this window of ${count(read.length)} events (back to ${instant(read[read.length - 1].createdAt)}) matches${reachedFrom ? ', and the window reached the start of the time range' : ''}.${next ? ' The next window may hold some.' : ''}</p>`;
      return html`${form}${why}${next ? html`<p><a rel="next" data-older href="/console/events${query({ type: type || undefined, from: q.from, to: q.to, before: next })}">Read the next window →</a></p>` : ''}`;
    }
    return html`${form}
<p class="muted">${filtered ? html`${count(matches.length)} of ${count(read.length)} events read match.` : ''} Newest first; events of ${request.viewer.mode} mode and events without one.</p>
${this.table(shown, true)}
${older}`;
  }

  private table(events: RecordedEvent[], withStream: boolean): Html {
    return html`<table class="panel" data-rows="${events.length}">
<thead><tr><th scope="col">Created</th><th scope="col">Type</th>${withStream ? html`<th scope="col">Stream</th>` : ''}<th scope="col" class="num">Revision</th><th scope="col">Actor</th><th scope="col">Position</th><th scope="col">Event</th></tr></thead>
<tbody>${events.map(
      (e) => html`<tr data-event="${e.id}"><td>${instant(e.createdAt)}</td><td><a href="/console/events${query({ type: e.type })}">${e.type}</a></td>${withStream ? html`<td><a href="${streamHref(e.streamId)}">${e.streamId}</a></td>` : ''}<td class="num">${e.revision}</td><td>${actorCell(e.metadata)}</td><td><code>${e.position}</code></td><td><a href="${eventHref(e.id, { stream: e.streamId, revision: e.revision })}">${e.id}</a></td></tr>`,
    )}</tbody></table>`;
  }

  private async stream(request: PageRequest): Promise<Html> {
    const stream = request.param!;
    const fromRevision = Math.max(0, Math.floor(Number(request.query.from ?? 0)) || 0);
    const read = await this.store.readStream(stream, { fromRevision, limit: PAGE + 1 });
    if (!read.length && fromRevision === 0) throw notFound(`There is no stream ${stream}.`);
    const events = read.slice(0, PAGE).filter(visibleIn(request.viewer.mode));
    if (!events.length && read.length) throw notFound(`The stream ${stream} holds no events of ${request.viewer.mode} mode.`);
    return html`<h2><code>${stream}</code></h2>
<p class="muted">In revision order, from revision ${fromRevision}.${fromRevision ? html` <a href="${streamHref(stream)}">From the start</a>` : ''}</p>
${events.length ? this.table(events, false) : html`<p class="muted">Nothing from this revision on.</p>`}
${read.length > PAGE ? html`<p><a rel="next" href="${streamHref(stream)}?from=${fromRevision + PAGE}">Later events →</a></p>` : ''}`;
  }

  /** The event, read by the most precise hint the link carried; bounded whichever it was. */
  private async find(id: string, q: Record<string, string | undefined>): Promise<RecordedEvent | undefined> {
    const at = validPosition(q.at);
    if (at) {
      // The event before it, then the one after that: the event at the position, on either store.
      const [previous] = await this.store.readAllBackward({ before: at, limit: 1 });
      const [found] = await this.store.readAll({ after: previous?.position ?? START, limit: 1 });
      if (found?.id === id) return found;
    }
    if (q.stream) {
      const revision = Number(q.revision);
      if (Number.isSafeInteger(revision) && revision >= 0) {
        const [found] = await this.store.readStream(q.stream, { fromRevision: revision, limit: 1 });
        if (found?.id === id) return found;
      }
      for (let from = 0; ; from += WINDOW) {
        const read = await this.store.readStream(q.stream, { fromRevision: from, limit: WINDOW });
        const found = read.find((e) => e.id === id);
        if (found || read.length < WINDOW) return found;
      }
    }
    let before: Position | undefined;
    for (let seen = 0; seen < RECENT; seen += WINDOW) {
      const read = await this.store.readAllBackward({ before, limit: WINDOW });
      const found = read.find((e) => e.id === id);
      if (found || read.length < WINDOW) return found;
      before = read[read.length - 1].position;
    }
    return undefined;
  }

  private async event(request: PageRequest): Promise<Html> {
    const id = request.param!;
    const event = await this.find(id, request.query);
    const where = request.query.stream || request.query.at ? '' : ` among the newest ${count(RECENT)} events (open an older one from its stream)`;
    if (!event || !visibleIn(request.viewer.mode)(event)) throw notFound(`No event ${id} in ${request.viewer.mode} mode${where}.`);
    const mode = request.viewer.mode;
    const deliveries = await this.deliveries.ofEvent(mode, event.id);
    return html`<dl class="panel facts" data-event="${event.id}">
<dt>Type</dt><dd><a href="/console/events${query({ type: event.type })}">${event.type}</a></dd>
<dt>Stream</dt><dd><a href="${streamHref(event.streamId)}">${event.streamId}</a></dd>
<dt>Revision</dt><dd>${event.revision}</dd>
<dt>Position</dt><dd><code>${event.position}</code> <a href="/console/events${query({ before: event.position })}">Older in the log</a></dd>
<dt>Created</dt><dd>${instant(event.createdAt)}</dd>
<dt>Actor</dt><dd data-actor>${actorCell(event.metadata)}</dd>
${typeof event.metadata?.reason === 'string' ? html`<dt>Reason</dt><dd data-reason>${event.metadata.reason}</dd>` : ''}
${typeof event.metadata?.request_id === 'string' ? html`<dt>Request</dt><dd><code>${event.metadata.request_id}</code></dd>` : ''}
<dt>Id</dt><dd><code>${event.id}</code></dd>
</dl>
${await this.purchase(event, mode)}
<h2>Webhook deliveries</h2>
${deliveryTable(deliveries)}
<h2>Data</h2>
<pre data-json="data">${JSON.stringify(event.data, null, 2)}</pre>
<h2>Metadata</h2>
<pre data-json="metadata">${JSON.stringify(event.metadata ?? {}, null, 2)}</pre>`;
  }

  /** From an event about a purchase: its checkout, its sale and the journal's postings for it. */
  private async purchase(event: RecordedEvent, mode: Mode): Promise<Html> {
    const purchaseId = event.data?.purchase_id;
    if (typeof purchaseId !== 'string') return html``;
    const postings = await this.journal.postingsOf(mode, purchaseId);
    const seller = typeof event.data.seller_account_id === 'string' ? event.data.seller_account_id : undefined;
    const sales = [...new Map(postings.filter((p) => p.event_type === 'SaleRecorded').map((p) => [p.event_id, p])).values()];
    const session = typeof event.data.session_id === 'string' ? event.data.session_id : undefined;
    return html`<section class="panel" data-purchase="${purchaseId}">
<h2>Purchase <code>${purchaseId}</code></h2>
<ul>
${session ? html`<li>Checkout: <a href="${streamHref(Streams.checkout(mode, session))}">${Streams.checkout(mode, session)}</a></li>` : ''}
${seller ? html`<li>Seller's ledger: <a href="${streamHref(Streams.ledger(mode, seller))}">${Streams.ledger(mode, seller)}</a></li>` : ''}
${sales.length ? sales.map((p) => html`<li>Sale: <a data-follow="sale" href="${eventHref(p.event_id, { at: p.position })}">SaleRecorded ${p.event_id}</a></li>`) : html`<li class="muted">No sale is in the journal for it yet.</li>`}
</ul>
<h3>Journal postings</h3>
${
  postings.length
    ? html`<table data-postings="${postings.length}"><thead><tr><th scope="col">Event</th><th scope="col">Account</th><th scope="col" class="num">Debit</th><th scope="col" class="num">Credit</th><th scope="col">Recorded</th><th scope="col">Actor</th><th scope="col">Reason</th></tr></thead>
<tbody>${postings.map((p) => html`<tr><td><a href="${eventHref(p.event_id, { at: p.position })}">${p.event_type}</a></td><td><code>${p.account}</code></td><td class="num">${p.debit_cents ? money(p.debit_cents, p.currency) : ''}</td><td class="num">${p.credit_cents ? money(p.credit_cents, p.currency) : ''}</td><td>${instant(p.recorded_at)}</td><td>${actorCell({ actor: p.actor, actor_type: p.actor_type })}</td><td>${p.reason ?? ''}</td></tr>`)}</tbody></table>`
    : html`<p class="muted">No postings for this purchase in ${mode} mode.</p>`
}
</section>`;
  }
}

export function deliveryTable(deliveries: OperatorDelivery[]): Html {
  if (!deliveries.length) return html`<p class="muted">None.</p>`;
  return html`<table class="panel" data-deliveries="${deliveries.length}">
<thead><tr><th scope="col">Delivery</th><th scope="col">Event type</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Last response</th><th scope="col">Endpoint</th><th scope="col">Created</th></tr></thead>
<tbody>${deliveries.map(
    (d) => html`<tr data-delivery="${d.id}"><td><a href="/console/webhooks/deliveries/${d.id}">${d.id}</a></td><td>${d.event_type}</td><td>${statusBadge(d.status)}</td><td class="num">${d.attempts}</td>
<td>${d.response_status ?? ''}${d.error ? html` <span class="muted">${d.error}</span>` : ''}</td><td><code>${d.endpoint_id}</code>${d.url ? html` <span class="muted">${d.url}</span>` : ''}</td><td>${instant(d.created_at)}</td></tr>`,
  )}</tbody></table>`;
}

/** Who recorded an event (its metadata's actor): an operator's name or an API key's id; "—" for events recorded without one. */
function actorCell(metadata: Record<string, unknown> | undefined): Html {
  const actor = metadata?.actor;
  if (typeof actor !== 'string') return html`<span class="muted">—</span>`;
  return html`<span data-actor-type="${String(metadata?.actor_type ?? '')}">${metadata?.actor_type === 'api_key' ? html`key <code>${actor}</code>` : actor}</span>`;
}

export function statusBadge(status: string): Html {
  const tone = status === 'succeeded' ? 'good' : status === 'failed' ? 'bad' : 'muted';
  return html`<span class="badge ${tone}">${status}</span>`;
}
