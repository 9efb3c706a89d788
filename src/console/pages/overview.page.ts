import { Injectable } from '@nestjs/common';
import { UsageQueries } from '../../inference/usage-queries';
import { ProjectionRunner } from '../../projection-runner/projection-runner';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { count } from '../format';
import { Html, html } from '../html';
import { chart } from '../layout';
import type { PageRequest } from '../viewer';

const USAGE_DAYS = 14;

/** UTC days from `days - 1` days ago to today, as yyyy-mm-dd. */
function lastDays(days: number, now = new Date()): string[] {
  return Array.from({ length: days }, (_, i) => new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The operators' first page: is the service serving (read models serving and not behind,
 * parked events, subscribers), and what it is doing (inference calls per day in the mode).
 */
@Injectable()
export class OverviewSection implements ConsoleSection {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly usage: UsageQueries,
  ) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/overview', title: 'Overview', role: 'operator', render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async render(request: PageRequest): Promise<Html> {
    const mode = request.viewer.mode;
    const [{ items, subscribers }, usage] = await Promise.all([this.projections.status(), this.usage.all({ mode })]);
    const serving = items.filter((p) => p.build && !p.stalled_since).length;
    const behind = items.filter((p) => p.behind).length;
    const parked = [...items, ...subscribers].reduce((sum, p) => sum + p.parked, 0);
    const maxLag = Math.max(0, ...items.map((p) => p.lag_seconds));
    const days = lastDays(USAGE_DAYS);
    const calls = new Map<string, number>();
    for (const row of usage) calls.set(row.day, (calls.get(row.day) ?? 0) + row.calls);
    return html`<div class="cards">
<div class="card"><div class="label">Read models serving</div><div class="value" data-card="serving">${serving} / ${items.length}</div></div>
<div class="card"><div class="label">Behind the log</div><div class="value">${behind}</div><div class="muted">largest lag ${maxLag.toFixed(1)} s</div></div>
<div class="card"><div class="label">Parked events</div><div class="value">${count(parked)}</div><div class="muted"><a href="/console/read-models">see them</a></div></div>
<div class="card"><div class="label">Subscribers</div><div class="value">${subscribers.filter((s) => !s.stalled_since).length} / ${subscribers.length} running</div></div>
</div>
${chart(
  { title: 'Inference calls', x: days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), series: [{ label: `Calls (${mode})`, values: days.map((d) => calls.get(d) ?? 0) }], bars: true },
  `per UTC day, the last ${USAGE_DAYS}`,
)}`;
  }
}
