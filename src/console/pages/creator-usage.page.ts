import { Injectable } from '@nestjs/common';
import { UsageQueries } from '../../inference/usage-queries';
import { usageReport, windowStart } from '../../inference/usage-totals';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { count } from '../format';
import { Html, html } from '../html';
import { chart } from '../layout';
import type { PageRequest } from '../viewer';

const DAYS = 30;

/** Inference prices are fractions of a cent: dollars to the micro-dollar, as GET /v1/usage's cost_usd. */
const usd = (micros: number) => `$${(micros / 1_000_000).toFixed(6)}`;

/** The UTC days of the window, oldest first, as yyyy-mm-dd. */
function windowDays(now = new Date()): string[] {
  const first = new Date(`${windowStart(DAYS, now)}T00:00:00Z`).getTime();
  return Array.from({ length: DAYS }, (_, i) => new Date(first + i * 86_400_000).toISOString().slice(0, 10));
}

/**
 * A creator's inference usage (any key, as GET /v1/usage): calls per day and model over the
 * last 30 days as a chart, and the totals per model and per day. The daily rows are the ones
 * GET /v1/usage sums (UsageQueries.daily), summed here by the same usageReport.
 */
@Injectable()
export class CreatorUsageSection implements ConsoleSection {
  constructor(private readonly usage: UsageQueries) {}

  pages(): ConsolePage[] {
    // No scope, as GET /v1/usage: any key may see its own account's usage.
    return [{ path: '/console/usage', title: 'Inference usage', role: 'creator', render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async render(request: PageRequest): Promise<Html> {
    const rows = await this.usage.daily(request.viewer.auth!, DAYS);
    const report = usageReport(rows, DAYS);
    const days = windowDays();
    const x = days.map((d) => Math.floor(new Date(`${d}T00:00:00Z`).getTime() / 1000));
    const callsOn = new Map(rows.map((r) => [`${r.day} ${r.model}`, r.calls]));
    const models = report.by_model.map((m) => m.model);
    const series = models.length
      ? models.map((model) => ({ label: model, values: days.map((d) => callsOn.get(`${d} ${model}`) ?? 0) }))
      : [{ label: 'Calls', values: days.map(() => 0) }];
    return html`<div class="cards">
<div class="card"><div class="label">Calls</div><div class="value" data-usage="calls">${count(report.summary.calls)}</div><div class="muted">the last ${DAYS} days</div></div>
<div class="card"><div class="label">Tokens</div><div class="value">${count(report.summary.total_tokens)}</div><div class="muted">${count(report.summary.prompt_tokens)} in, ${count(report.summary.completion_tokens)} out</div></div>
<div class="card"><div class="label">Cost</div><div class="value" data-usage="cost">${usd(report.summary.cost_micros)}</div></div>
</div>
${chart({ title: 'Calls per day', x, series, bars: models.length <= 1 }, `by model, each UTC day of the last ${DAYS}`)}
<table class="panel" data-models="${report.by_model.length}"><caption>By model</caption>
<thead><tr><th scope="col">Model</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Prompt tokens</th><th scope="col" class="num">Completion tokens</th><th scope="col" class="num">Cost</th></tr></thead>
<tbody>${report.by_model.map(
      (m) => html`<tr data-model="${m.model}"><td><code>${m.model}</code></td><td class="num">${count(m.calls)}</td><td class="num">${count(m.prompt_tokens)}</td><td class="num">${count(m.completion_tokens)}</td><td class="num">${usd(m.cost_micros)}</td></tr>`,
    )}</tbody></table>
<table class="panel"><caption>Per day and model</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Model</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Prompt tokens</th><th scope="col" class="num">Completion tokens</th><th scope="col" class="num">Cost</th></tr></thead>
<tbody>${[...rows].sort((a, b) => b.day.localeCompare(a.day) || a.model.localeCompare(b.model)).map(
      (r) => html`<tr><td>${r.day}</td><td><code>${r.model}</code></td><td class="num">${count(r.calls)}</td><td class="num">${count(r.prompt_tokens)}</td><td class="num">${count(r.completion_tokens)}</td><td class="num">${usd(r.cost_micros)}</td></tr>`,
    )}</tbody></table>
${rows.length ? '' : html`<p class="muted">No inference call in the last ${DAYS} days with this key's account in ${request.viewer.mode} mode.</p>`}`;
  }
}
