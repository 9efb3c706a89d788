import { Injectable } from '@nestjs/common';
import { JournalQueries, periodsOf } from '../../ledger/journal-queries';
import { LedgerQueries } from '../../ledger/ledger-queries';
import { TRANSACTION_TYPES, TransactionType } from '../../ledger/ledger.decider';
import type { AuthContext } from '../../platform/auth/auth-context';
import { csvCell } from '../csv';
import { ConsoleAction, ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { instant, money } from '../format';
import { Html, html } from '../html';
import { chart } from '../layout';
import type { PageRequest } from '../viewer';

const HISTORY_DAYS = 30;
const PAGE_ROWS = 50;
/** A CSV download holds at most this many lines (newest first), like one export of the API's list. */
const CSV_ROWS = 10_000;

const isType = (value: string | undefined): value is TransactionType => (TRANSACTION_TYPES as readonly string[]).includes(value ?? '');

/** A yyyy-mm-dd filter field as the start of that UTC day; refused clearly when it is not one. */
function dayParam(field: string, raw: string | undefined): Date | undefined {
  if (!raw) return undefined;
  const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? new Date(`${raw}T00:00:00Z`) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw new ConsoleInputError(`"${field}" must be a date such as 2026-01-31.`);
  return date;
}

/**
 * A creator's money (scope payouts:read, as GET /v1/balance): the balance now and its
 * history as a chart, sales and refunds per day, and the balance transactions with filters
 * and a CSV download. The same journal and ledger queries as the API.
 */
@Injectable()
export class CreatorMoneySection implements ConsoleSection {
  constructor(
    private readonly journal: JournalQueries,
    private readonly ledger: LedgerQueries,
  ) {}

  pages(): ConsolePage[] {
    return [
      { path: '/console/home', title: 'Balance', role: 'creator', scopes: ['payouts:read'], render: (request) => this.home(request.viewer.auth!) },
      {
        path: '/console/transactions',
        title: 'Balance transactions',
        role: 'creator',
        scopes: ['payouts:read'],
        render: (request) => this.transactions(request),
        csv: (request) => this.csv(request),
      },
    ];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async home(auth: AuthContext): Promise<Html> {
    const now = new Date();
    const periods = periodsOf(new Date(now.getTime() - (HISTORY_DAYS - 1) * 86_400_000), now, 'day');
    const [balance, history] = await Promise.all([this.journal.balance(auth), this.journal.history(auth, periods)]);
    const x = history.items.map((p) => Math.floor(new Date(p.start).getTime() / 1000));
    return html`<div class="cards">
<div class="card"><div class="label">Available</div><div class="value" data-balance="available">${money(balance.available_cents, balance.currency)}</div></div>
<div class="card"><div class="label">In transit to you</div><div class="value">${money(balance.in_transit_cents, balance.currency)}</div></div>
<div class="card"><div class="label">Withheld (disputes)</div><div class="value">${money(balance.withheld_cents, balance.currency)}</div></div>
</div>
${chart({ title: 'Balance', x, series: [{ label: 'Closing balance', values: history.items.map((p) => p.closing_balance_cents) }], money: true, fill: true }, `each day of the last ${HISTORY_DAYS}, UTC`)}
${chart(
  {
    title: 'Sales and refunds',
    x,
    series: [
      { label: 'Sales', values: history.items.map((p) => p.activity.sales_cents) },
      { label: 'Refunds', values: history.items.map((p) => -p.activity.refunds_cents) },
    ],
    money: true,
    bars: true,
  },
  'per day, at their amount',
)}
<table class="panel"><caption>Per day</caption>
<thead><tr><th scope="col">Day</th><th scope="col" class="num">Opening</th><th scope="col" class="num">Sales</th><th scope="col" class="num">Fees</th><th scope="col" class="num">Refunds</th><th scope="col" class="num">Payouts</th><th scope="col" class="num">Disputes</th><th scope="col" class="num">Adjustments</th><th scope="col" class="num">Closing</th></tr></thead>
<tbody>${[...history.items].reverse().map(
      (p) => html`<tr><td>${p.start.slice(0, 10)}</td><td class="num">${money(p.opening_balance_cents)}</td><td class="num">${money(p.activity.sales_cents)}</td><td class="num">${money(p.activity.fees_cents)}</td><td class="num">${money(p.activity.refunds_cents)}</td><td class="num">${money(p.activity.payouts_cents)}</td><td class="num">${money(p.activity.disputes_cents)}</td><td class="num">${money(p.activity.adjustments_cents)}</td><td class="num">${money(p.closing_balance_cents)}</td></tr>`,
    )}</tbody></table>`;
  }

  private filters(request: PageRequest) {
    const { type, from, to, payout } = request.query;
    if (type && !isType(type)) throw new ConsoleInputError(`"type" must be one of ${TRANSACTION_TYPES.join(', ')}.`);
    // As GET /v1/balance_transactions?payout=: the sales and refunds that payout paid out (another ledger's payout is 404).
    if (payout && !/^po_[A-Za-z0-9]{1,64}$/.test(payout)) throw new ConsoleInputError('"payout" must be a payout id (po_...).');
    const createdGte = dayParam('from', from);
    const until = dayParam('to', to);
    // "to" is a day shown whole: up to the start of the next.
    const createdLt = until && new Date(until.getTime() + 86_400_000);
    if (createdGte && createdLt && createdGte >= createdLt) throw new ConsoleInputError('"from" must not be after "to".');
    return {
      type: type || undefined,
      from,
      to,
      payout: payout || undefined,
      options: {
        type: (type || undefined) as TransactionType | undefined,
        created: [...(createdGte ? [{ op: '>=' as const, at: createdGte }] : []), ...(createdLt ? [{ op: '<' as const, at: createdLt }] : [])],
        payoutId: payout || undefined,
      },
    };
  }

  private async transactions(request: PageRequest): Promise<Html> {
    const auth = request.viewer.auth!;
    const query = request.query;
    const form = html`<form class="filters" method="get" action="/console/transactions">
<div><label for="type">Type</label><select id="type" name="type"><option value="">all</option>${TRANSACTION_TYPES.map((t) => html`<option value="${t}"${query.type === t ? html` selected` : ''}>${t}</option>`)}</select></div>
<div><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${query.from ?? ''}"></div>
<div><label for="to">To (UTC day)</label><input id="to" name="to" type="date" value="${query.to ?? ''}"></div>
${query.payout ? html`<input type="hidden" name="payout" value="${query.payout}">` : ''}<button type="submit">Filter</button></form>
${query.payout ? html`<p data-payout-filter>Paid out by <code>${query.payout}</code> · <a href="/console/transactions">all transactions</a></p>` : ''}`;
    let filters;
    try {
      filters = this.filters(request);
    } catch (error) {
      return html`${form}<p class="notice error" role="alert">${(error as Error).message}</p>`;
    }
    const page = await this.ledger.snapshot(async (q) => {
      const { summary } = await this.ledger.account(auth, q);
      return this.ledger.transactions(auth, { ...filters.options, limit: PAGE_ROWS, cursor: query.cursor || undefined }, summary.balance_cents, q);
    });
    const keep = new URLSearchParams(Object.entries({ type: filters.type, from: filters.from, to: filters.to, payout: filters.payout }).filter(([, v]) => v) as [string, string][]);
    const csvLink = `/console/transactions?${new URLSearchParams([...keep, ['format', 'csv']])}`;
    const next = page.next_cursor ? `/console/transactions?${new URLSearchParams([...keep, ['cursor', page.next_cursor]])}` : undefined;
    return html`${form}
<p><a href="${csvLink}" download>Download CSV</a> <span class="muted">(these filters, newest first)</span></p>
<table class="panel" data-rows="${page.items.length}">
<thead><tr><th scope="col">Created</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Fee</th><th scope="col" class="num">Net</th><th scope="col" class="num">Balance after</th></tr></thead>
<tbody>${page.items.map(
      (t) => html`<tr><td>${instant(t.created_at)}</td><td>${t.type}</td><td>${t.description}</td><td class="num">${money(t.amount_cents)}</td><td class="num">${money(t.fee_cents)}</td><td class="num">${money(t.net_cents)}</td><td class="num">${money(t.balance_after_cents)}</td></tr>`,
    )}</tbody></table>
${page.items.length ? '' : html`<p class="muted">No balance transaction matches.</p>`}
${next ? html`<p><a href="${next}">Older transactions</a></p>` : ''}`;
  }

  private async csv(request: PageRequest): Promise<{ fileName: string; body: string }> {
    const auth = request.viewer.auth!;
    const { options } = this.filters(request);
    const page = await this.ledger.snapshot(async (q) => {
      const { summary } = await this.ledger.account(auth, q);
      return this.ledger.transactions(auth, { ...options, limit: CSV_ROWS }, summary.balance_cents, q);
    });
    const columns = ['id', 'created_at', 'type', 'reporting_category', 'description', 'amount_cents', 'fee_cents', 'net_cents', 'balance_after_cents', 'currency'] as const;
    const lines = [columns.join(','), ...page.items.map((t) => columns.map((c) => csvCell((t as unknown as Record<string, unknown>)[c])).join(','))];
    return { fileName: `balance-transactions-${auth.mode}.csv`, body: `${lines.join('\r\n')}\r\n` };
  }
}
