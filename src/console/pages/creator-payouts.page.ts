import { Injectable } from '@nestjs/common';
import type { Payout } from '../../ledger/events';
import { LedgerQueries, PayoutsPauseView } from '../../ledger/ledger-queries';
import { ConsoleAction, ConsolePage, ConsoleSection } from '../console-page';
import { instant, money } from '../format';
import { Html, html } from '../html';
import type { PageRequest } from '../viewer';

const PAGE_ROWS = 50;

const STATUS: Record<Payout['status'], { label: string; tone: string }> = {
  in_transit: { label: 'in transit', tone: 'muted' },
  paid: { label: 'paid', tone: 'good' },
  failed: { label: 'failed', tone: 'bad' },
};

/** Why the creator's payouts wait: a refused destination (lifted by a new one) or an operator's pause. */
function pauseNote(pause: PayoutsPauseView | null): Html {
  if (pause?.failure_code) {
    return html`<div class="muted" data-pause-reason="${pause.reason}">Paused since ${instant(pause.since)}: the payment processor refused your payout destination (${pause.failure_code}). The balance waits until a new destination is set.</div>`;
  }
  return html`<div class="muted" data-pause-reason="${pause?.reason ?? ''}">An operator paused your payouts${pause ? html` on ${instant(pause.since)}` : ''}; the balance waits until they resume.</div>`;
}

/**
 * A creator's payouts (scope payouts:read, as GET /v1/payouts): what is owed now, each payout
 * with its status, and a link to the sales and refunds it paid out. The same ledger queries
 * as the API, on one snapshot so the amount owed and the list agree.
 */
@Injectable()
export class CreatorPayoutsSection implements ConsoleSection {
  constructor(private readonly ledger: LedgerQueries) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/payouts', title: 'Payouts', role: 'creator', scopes: ['payouts:read'], render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async render(request: PageRequest): Promise<Html> {
    const auth = request.viewer.auth!;
    const cursor = request.query.cursor || undefined;
    const { page, account } = await this.ledger.snapshot(async (q) => ({
      page: await this.ledger.payouts(auth, { limit: PAGE_ROWS, cursor }, q),
      account: await this.ledger.account(auth, q),
    }));
    const currency = account.summary.currency;
    const next = page.next_cursor ? `/console/payouts?${new URLSearchParams({ cursor: page.next_cursor })}` : undefined;
    return html`<div class="cards">
<div class="card"><div class="label">Owed to you now</div><div class="value" data-owed>${money(Math.max(0, account.summary.balance_cents), currency)}</div></div>
<div class="card"><div class="label">Paid out so far</div><div class="value">${money(account.summary.paid_out_cents, currency)}</div></div>
<div class="card"><div class="label">Payouts</div><div class="value">${account.payouts_paused ? html`<span class="badge bad">paused</span>` : html`<span class="badge good">running</span>`}</div>${account.payouts_paused ? pauseNote(account.payouts_pause) : ''}</div>
</div>
<table class="panel" data-rows="${page.items.length}">
<caption class="visually-hidden">Payouts, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Payout</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Arrived</th><th scope="col">What it paid out</th></tr></thead>
<tbody>${page.items.map(
      (p) => html`<tr data-payout="${p.id}"><td>${instant(p.created_at)}</td><td><code>${p.id}</code></td><td><span class="badge ${STATUS[p.status].tone}">${STATUS[p.status].label}</span>${
        p.status === 'failed' && (p.failure_message || p.failure_code) ? html`<div class="muted">${p.failure_message ?? ''}${p.failure_code ? html` (${p.failure_code})` : ''}</div>` : ''
      }</td><td class="num">${money(p.amount_cents, p.currency)}</td><td>${instant(p.arrival_date)}</td><td>${
        // A refused payout paid nothing out; its sales wait for the next one.
        p.status === 'failed' ? html`<span class="muted">nothing (returned to the balance)</span>` : html`<a href="/console/transactions?${new URLSearchParams({ payout: p.id })}">Balance transactions</a>`
      }</td></tr>`,
    )}</tbody></table>
${page.items.length ? '' : html`<p class="muted">No payout yet: payouts send the whole available balance once a run finds it positive.</p>`}
${next ? html`<p><a href="${next}">Older payouts</a></p>` : ''}`;
  }
}
