import { Injectable } from '@nestjs/common';
import { Readiness } from '../../health/readiness';
import { UsageQueries } from '../../inference/usage-queries';
import { DeliveryLog } from '../../webhooks/delivery-log';
import { EventQueries } from '../../webhooks/event-queries';
import { ProjectionRunner } from '../../projection-runner/projection-runner';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { count } from '../format';
import { Html, html } from '../html';
import { chart } from '../layout';
import type { PageRequest } from '../viewer';

const USAGE_DAYS = 14;
const ACTIVITY_MINUTES = 60;

/** The business events charted on the overview, in series; the other public types are summed as "other". */
const ACTIVITY_SERIES = [
  { label: 'Sales', types: ['listing.purchased'] },
  { label: 'Downloads', types: ['asset.downloaded'] },
  { label: 'Publishes', types: ['listing.published', 'factory.job.published'] },
  { label: 'Refunds and payouts', types: ['purchase.refunded', 'payout.paid', 'payout.failed'] },
];

/** UTC days from `days - 1` days ago to today, as yyyy-mm-dd. */
function lastDays(days: number, now = new Date()): string[] {
  return Array.from({ length: days }, (_, i) => new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The operators' first page: is the service serving (read models serving and not behind,
 * parked events, subscribers, read-model lag per minute over the last hour), and what it is
 * doing: events appended to the log per minute (every stream), and in the mode business
 * events per minute (sales, downloads, publishes: the public events of every account),
 * webhook delivery attempts by outcome, and inference calls per day.
 * Every query reads counts kept as the rows were written (the per-minute tables), so a burst
 * in the hour costs no more to show than a quiet one.
 */
@Injectable()
export class OverviewSection implements ConsoleSection {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly usage: UsageQueries,
    private readonly events: EventQueries,
    private readonly readiness: Readiness,
    private readonly deliveries: DeliveryLog,
  ) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/overview', title: 'Overview', role: 'operator', render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async render(request: PageRequest): Promise<Html> {
    const mode = request.viewer.mode;
    const now = Date.now();
    const firstMinute = Math.floor(now / 60_000) - (ACTIVITY_MINUTES - 1);
    const since = new Date(firstMinute * 60_000);
    const [{ items, subscribers }, usage, activity, checks, attempts, lags, appends] = await Promise.all([
      this.projections.status(),
      this.usage.callsPerDay(mode, lastDays(USAGE_DAYS)[0]),
      this.events.perMinute(mode, since),
      Promise.all([this.readiness.database(), this.readiness.eventStore(), this.readiness.storage(), this.readiness.projectionsServing()]),
      this.deliveries.attemptsPerMinute(mode, since),
      this.projections.lagPerMinute(since),
      this.projections.appendsPerMinute(since),
    ]);
    const appendedAt = new Map(appends.map((a) => [Math.floor(a.minute.getTime() / 60_000), a.events]));
    const lagAt = new Map(lags.map((l) => [Math.floor(l.minute.getTime() / 60_000), l.lag_seconds]));
    const attemptsAt = new Map(attempts.map((a) => [Math.floor(a.minute.getTime() / 60_000), a]));
    const succeeded = attempts.reduce((sum, a) => sum + a.succeeded, 0);
    const tried = succeeded + attempts.reduce((sum, a) => sum + a.failed, 0);
    // The checks of GET /readyz: each answers { name: { status, message? } }.
    const failing = checks.flatMap((result) => Object.entries(result).filter(([, check]) => check.status !== 'up').map(([name, check]) => `${name}: ${String(check.message ?? 'down')}`));
    const minutes = Array.from({ length: ACTIVITY_MINUTES }, (_, i) => firstMinute + i);
    const activitySeries = ACTIVITY_SERIES.map(({ label, types }) => {
      const perMinute = new Map<number, number>();
      for (const row of activity) {
        if (!types.includes(row.type)) continue;
        const minute = Math.floor(row.minute.getTime() / 60_000);
        perMinute.set(minute, (perMinute.get(minute) ?? 0) + row.events);
      }
      return { label, values: minutes.map((m) => perMinute.get(m) ?? 0) };
    });
    const serving = items.filter((p) => p.build && !p.stalled_since).length;
    const behind = items.filter((p) => p.behind).length;
    const parked = [...items, ...subscribers].reduce((sum, p) => sum + p.parked, 0);
    const maxLag = Math.max(0, ...items.map((p) => p.lag_seconds));
    const days = lastDays(USAGE_DAYS);
    const calls = new Map(usage.map((row) => [row.day, row.calls]));
    return html`<div class="cards">
<div class="card"><div class="label">Ready (GET /readyz)</div><div class="value" data-card="ready">${failing.length ? html`<span class="badge bad">not ready</span>` : html`<span class="badge good">ready</span>`}</div>${failing.map((f) => html`<div class="muted">${f}</div>`)}</div>
<div class="card"><div class="label">Read models serving</div><div class="value" data-card="serving">${serving} / ${items.length}</div></div>
<div class="card"><div class="label">Behind the log</div><div class="value">${behind}</div><div class="muted">largest lag ${maxLag.toFixed(1)} s</div></div>
<div class="card"><div class="label">Parked events</div><div class="value">${count(parked)}</div><div class="muted"><a href="/console/read-models">see them</a></div></div>
<div class="card"><div class="label">Webhook attempts answered 2xx, last hour</div><div class="value" data-card="webhook-success">${tried ? `${Math.round((succeeded / tried) * 100)}%` : '—'}</div><div class="muted">${count(succeeded)} of ${count(tried)}</div></div>
<div class="card"><div class="label">Subscribers</div><div class="value">${subscribers.filter((s) => !s.stalled_since).length} / ${subscribers.length} running</div></div>
</div>
${chart(
  // A minute no worker sampled (none was running) is a gap, not a zero.
  { title: 'Read model lag', x: minutes.map((m) => m * 60), series: [{ label: 'Largest lag (s)', values: minutes.map((m) => lagAt.get(m) ?? null) }], fill: true, points: true },
  `per minute, the last ${ACTIVITY_MINUTES}: the largest any read model had (the age of the oldest event it had not read), sampled by the workers`,
)}
${chart(
  { title: 'Events appended', x: minutes.map((m) => m * 60), series: [{ label: 'Events', values: minutes.map((m) => appendedAt.get(m) ?? 0) }], fill: true },
  `per minute, the last ${ACTIVITY_MINUTES}: the whole log, every stream in both modes`,
)}
${chart({ title: 'Business events', x: minutes.map((m) => m * 60), series: activitySeries }, `per minute, the last ${ACTIVITY_MINUTES}, every account in ${mode} mode`)}
${chart(
  {
    title: 'Webhook delivery attempts',
    x: minutes.map((m) => m * 60),
    series: [
      { label: 'Answered 2xx', values: minutes.map((m) => attemptsAt.get(m)?.succeeded ?? 0) },
      { label: 'Failed', values: minutes.map((m) => attemptsAt.get(m)?.failed ?? 0) },
    ],
    bars: true,
  },
  `per minute, the last ${ACTIVITY_MINUTES}, every endpoint in ${mode} mode`,
)}
${chart(
  { title: 'Inference calls', x: days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), series: [{ label: `Calls (${mode})`, values: days.map((d) => calls.get(d) ?? 0) }], bars: true },
  `per UTC day, the last ${USAGE_DAYS}`,
)}`;
  }
}
