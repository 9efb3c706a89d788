import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, parsePosition, Position } from '../../event-store/event-store';
import { ProjectionRunner, UnknownProjectionError } from '../../projection-runner/projection-runner';
import type { ProjectionStatus, SubscriberStatus } from '../../projection-runner/status';
import { ConsoleAction, ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant } from '../format';
import { Html, html } from '../html';
import { csrfField } from '../layout';
import type { PageRequest } from '../viewer';

type ProjectionsStatus = { items: ProjectionStatus[]; subscribers: SubscriberStatus[] };

/**
 * How far a build has read, as a share of the log: the prepare part of a position grows with
 * the log on both stores (Postgres: its global position; EventStoreDB: its byte offset).
 */
function progress(position: Position, head: Position): number {
  const end = parsePosition(head).prepare;
  return end === 0n ? 1 : Math.min(1, Number((parsePosition(position).prepare * 1000n) / end) / 1000);
}

function statusBadge(p: ProjectionStatus): Html {
  if (p.stalled_since) return html`<span class="badge bad">stalled</span>`;
  if (!p.build) return html`<span class="badge bad">no serving build</span>`;
  if (p.rebuilding) return html`<span class="badge muted">rebuilding</span>`;
  return p.behind ? html`<span class="badge muted">catching up</span>` : html`<span class="badge good">serving</span>`;
}

/**
 * Read models (operators): every projection with its version, status, position and lag; a
 * rebuild started here shows its progress until the new build takes over; parked events
 * with their error, offered to their read model again.
 */
@Injectable()
export class ReadModelsSection implements ConsoleSection {
  constructor(
    private readonly projections: ProjectionRunner,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  pages(): ConsolePage[] {
    return [
      {
        path: '/console/read-models',
        title: 'Read models',
        role: 'operator',
        render: async (request) => {
          // One status read serves both parts of the page.
          const status = await this.projections.status();
          return html`${await this.table(request, status)}${await this.parked(request, status)}`;
        },
        fragment: async (request) => this.table(request, await this.projections.status()),
      },
    ];
  }

  actions(): ConsoleAction[] {
    return [
      {
        path: '/console/read-models/:id/rebuild',
        role: 'operator',
        run: async (request) => {
          // Started, not awaited: the page shows the build catching up and its switch-over.
          await this.known(() => this.projections.rebuild([request.param!], { timeoutMs: 0 }));
          return { redirect: '/console/read-models', notice: 'rebuild-started' };
        },
      },
      {
        path: '/console/read-models/:id/retry-parked',
        role: 'operator',
        run: async (request) => {
          await this.known(() => this.projections.retryParked(request.param!));
          return { redirect: '/console/read-models', notice: 'parked-retried' };
        },
      },
    ];
  }

  private async known<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof UnknownProjectionError) throw new ConsoleInputError(error.message);
      throw error;
    }
  }

  private async table(request: PageRequest, { items, subscribers }: ProjectionsStatus): Promise<Html> {
    const head = await this.store.headPosition();
    const moving = items.some((p) => p.rebuilding || p.behind);
    return html`<section class="panel" id="read-models"${moving ? html` data-refresh="/console/read-models" data-refresh-ms="700"` : ''}>
<table>
<caption class="visually-hidden">Read models and subscribers</caption>
<thead><tr><th scope="col">Read model</th><th scope="col">Version</th><th scope="col">Status</th><th scope="col" class="num">Lag (s)</th><th scope="col">Position</th><th scope="col" class="num">Parked</th><th scope="col">Rebuild</th></tr></thead>
<tbody>
${items.map((p) => {
  const share = p.rebuilding ? progress(p.rebuilding.position, head) : undefined;
  return html`<tr data-read-model="${p.name}">
<th scope="row">${p.name}</th>
<td>${p.version}</td>
<td>${statusBadge(p)}${p.error ? html`<div class="muted">${p.error.message}</div>` : ''}</td>
<td class="num">${p.lag_seconds.toFixed(1)}</td>
<td><code>${p.position}</code><div class="muted">${instant(p.updated_at)}</div></td>
<td class="num">${count(p.parked)}</td>
<td>${
    share !== undefined
      ? html`<label for="progress-${p.name}" class="visually-hidden">Rebuild of ${p.name}</label><progress id="progress-${p.name}" max="100" value="${Math.round(share * 100)}">${Math.round(share * 100)}%</progress> ${Math.round(share * 100)}% <span class="muted">to version ${p.rebuilding!.version}</span>`
      : html`<form class="inline" method="post" action="/console/read-models/${p.name}/rebuild" data-confirm="Rebuild ${p.name} beside the live read model?">${csrfField(request.viewer)}<button class="secondary" type="submit">Rebuild ${p.name}</button></form>`
  }</td>
</tr>`;
})}
${subscribers.map(
  (s) => html`<tr data-subscriber="${s.name}"><th scope="row">${s.name} <span class="muted">(subscriber)</span></th><td>—</td><td>${s.stalled_since ? html`<span class="badge bad">stalled</span>` : html`<span class="badge good">running</span>`}</td><td class="num">${s.lag_seconds.toFixed(1)}</td><td><code>${s.position}</code></td><td class="num">${count(s.parked)}</td><td></td></tr>`,
)}
</tbody>
</table>
</section>`;
  }

  private async parked(request: PageRequest, status: ProjectionsStatus): Promise<Html> {
    const items = await this.projections.parked();
    if (!items.length) return html`<h2>Parked events</h2><p class="muted">No event is parked.</p>`;
    // Parked events are kept per consumer (a build, or a subscriber); they are retried by the name it serves.
    const nameOf = new Map<string, string>([...status.items.map((p) => [p.build ?? p.name, p.name] as const), ...status.subscribers.map((s) => [s.name, s.name] as const)]);
    const byModel = new Map<string, typeof items>();
    for (const item of items) {
      const name = nameOf.get(item.consumer) ?? item.consumer;
      byModel.set(name, [...(byModel.get(name) ?? []), item]);
    }
    return html`<h2>Parked events</h2>
${[...byModel].map(
  ([name, parked]) => html`<section class="panel" data-parked="${name}">
<h3>${name} <form class="inline" method="post" action="/console/read-models/${name}/retry-parked">${csrfField(request.viewer)}<button type="submit">Retry ${count(parked.length)} parked</button></form></h3>
<table><thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Error</th><th scope="col">Parked</th></tr></thead>
<tbody>${parked.map((p) => html`<tr><td><code>${p.event_id}</code></td><td>${p.type}</td><td>${p.error}</td><td>${instant(p.parked_at)}</td></tr>`)}</tbody></table>
</section>`,
)}`;
  }
}
