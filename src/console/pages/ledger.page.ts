import { Injectable } from '@nestjs/common';
import { Accounts, isDebitNormal, Posting } from '../../ledger/journal';
import { JournalQueries, TrialBalance } from '../../ledger/journal-queries';
import { DEFAULT_CURRENCY } from '../../ledger/ledger.decider';
import { DetailedReconciliation, LedgerReconciliation, ReconciliationItem } from '../../ledger/reconciliation';
import { ApiError } from '../../platform/errors';
import { cutoffParam } from '../../platform/instant';
import type { Mode } from '../../platform/mode';
import { csvCell } from '../csv';
import { ConsoleAction, ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant, money } from '../format';
import { Html, html } from '../html';
import { chart } from '../layout';
import type { PageRequest } from '../viewer';

const DAY_MS = 86_400_000;
const REVENUE_DAYS = 30;
const PAGE_ROWS = 50;
/** The API's largest page: the CSV walks the journal with the same cursor, this many at a time. */
const CSV_PAGE = 5000;
/** Beyond this a download is the CLI's job (`svc ledger journal`), which streams. */
const CSV_ROWS = 100_000;
/** The matched items listed on the page; the count and the totals per kind cover all of them. */
const MATCHED_SHOWN = 100;

const REVENUE_ACCOUNTS: string[] = [Accounts.feeRevenue, Accounts.activationRevenue];
const POSTING_COLUMNS = ['posting_id', 'event_id', 'event_type', 'position', 'recorded_at', 'mode', 'account', 'currency', 'debit_cents', 'credit_cents', 'reference', 'processor_ref'] as const;

type Kind = 'asset' | 'liability' | 'revenue' | 'expense';

/** The chart of accounts' kinds (docs/ledger.md): what sign the balance is read in. */
function kindOf(account: string): Kind {
  if (account === Accounts.processorFees) return 'expense';
  if (isDebitNormal(account)) return 'asset';
  if (REVENUE_ACCOUNTS.includes(account)) return 'revenue';
  return 'liability';
}

/** An instant the API would accept (ISO 8601), refused on the page with the API's message. */
function instantOf(field: string, raw: string): Date {
  try {
    return cutoffParam(field, raw)!;
  } catch (error) {
    if (error instanceof ApiError) throw new ConsoleInputError(error.message);
    throw error;
  }
}

/** `as_of`: a day picked in the form means the end of that UTC day; a full instant (a link from the API) is kept as given. */
function asOfParam(raw: string | undefined): Date | undefined {
  if (!raw) return undefined;
  const at = instantOf('as_of', raw);
  // Recorded strictly before the next midnight: the whole day.
  return /^\d{4}-\d{2}-\d{2}$/.test(raw) ? new Date(at.getTime() + DAY_MS) : at;
}

/** A `from`/`to` pair of UTC days; `to` is shown whole, so the range ends at the start of the next day. */
function dayRange(query: Record<string, string | undefined>): { from?: Date; to?: Date } {
  const day = (field: 'from' | 'to') => {
    const raw = query[field];
    if (!raw) return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(raw)) throw new ConsoleInputError(`"${field}" must be a UTC day such as 2026-01-31.`);
    return instantOf(field, raw);
  };
  const from = day('from');
  const until = day('to');
  if (from && until && from > until) throw new ConsoleInputError('"from" must not be after "to".');
  return { from, to: until && new Date(until.getTime() + DAY_MS) };
}

const SUBPAGES = [
  { path: '/console/ledger', label: 'Trial balance' },
  { path: '/console/ledger/journal', label: 'Journal' },
  { path: '/console/ledger/reconcile', label: 'Reconciliation' },
];

function subnav(current: string): Html {
  return html`<nav class="panel" aria-label="Ledger pages">${SUBPAGES.map(
    (p, i) => html`${i ? ' · ' : ''}${p.path === current ? html`<a href="${p.path}" aria-current="page"><strong>${p.label}</strong></a>` : html`<a href="${p.path}">${p.label}</a>`}`,
  )}</nav>`;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const errorNotice = (error: unknown): Html => html`<p class="notice error" role="alert">${(error as Error).message}</p>`;

/** Keeps the filters that were given, for the next page's and the download's links. */
function linkTo(path: string, params: Record<string, string | undefined>): string {
  const given = Object.entries(params).filter(([, v]) => v) as [string, string][];
  return given.length ? `${path}?${new URLSearchParams(given)}` : path;
}

/**
 * The ledger for finance (operators): the trial balance as of any moment with platform revenue
 * against processor fees per day, the journal's postings with filters and a CSV download, and
 * reconciliation with the processor. The same JournalQueries and LedgerReconciliation as
 * /admin/ledger/*, in the viewer's mode.
 */
@Injectable()
export class LedgerSection implements ConsoleSection {
  constructor(
    private readonly journal: JournalQueries,
    private readonly reconciliation: LedgerReconciliation,
  ) {}

  pages(): ConsolePage[] {
    return [
      { path: '/console/ledger', title: 'Ledger: trial balance', role: 'operator', render: (request) => this.trialBalancePage(request) },
      {
        path: '/console/ledger/journal',
        title: 'Ledger: journal',
        role: 'operator',
        render: (request) => this.journalPage(request),
        csv: (request) => this.journalCsv(request),
      },
      { path: '/console/ledger/reconcile', title: 'Ledger: reconciliation', role: 'operator', render: (request) => this.reconcilePage(request) },
    ];
  }

  actions(): ConsoleAction[] {
    return [];
  }

  private async trialBalancePage(request: PageRequest): Promise<Html> {
    const mode = request.viewer.mode;
    const raw = request.query.as_of;
    const form = html`<form class="filters" method="get" action="/console/ledger">
<div><label for="as_of">As of the end of (UTC day)</label><input id="as_of" name="as_of" type="date" value="${raw ?? ''}"></div>
<button type="submit">Show</button>${raw ? html` <a href="/console/ledger">Now</a>` : ''}</form>`;
    let asOf: Date | undefined;
    try {
      asOf = asOfParam(raw);
    } catch (error) {
      return html`${subnav('/console/ledger')}${form}${errorNotice(error)}`;
    }
    const [revenue, balance] = await Promise.all([this.revenueAgainstFees(mode), this.journal.trialBalance(mode, asOf)]);
    return html`${subnav('/console/ledger')}${form}
${this.trialBalanceTable(balance, asOf !== undefined)}
<h2>Revenue and processor fees</h2>
${revenue}`;
  }

  private trialBalanceTable(tb: TrialBalance, past: boolean): Html {
    const currencies = tb.currency_totals.length ? tb.currency_totals : [{ currency: DEFAULT_CURRENCY, debits_cents: 0, credits_cents: 0 }];
    const status = tb.balanced
      ? html`<p class="notice ok" role="status" data-balanced="true">Balanced: debits equal credits in every currency.</p>`
      : html`<div class="notice error" role="alert" data-balanced="false"><p><strong>Not balanced.</strong> ${currencies
          .filter((t) => t.debits_cents !== t.credits_cents)
          .map((t) => html`In ${t.currency.toUpperCase()}, debits ${money(t.debits_cents, t.currency)} and credits ${money(t.credits_cents, t.currency)} differ by ${money(t.debits_cents - t.credits_cents, t.currency)}. `)}
The read model was changed or a posting rule is wrong: keep this page, rebuild the journal read model, and look again.</p>
${tb.unbalanced_events.length ? html`<p>The events whose postings do not balance:</p><ul>${tb.unbalanced_events.map((e) => html`<li><code>${e.event_id}</code> (${e.event_type}, position ${e.position}): debits ${money(e.debits_cents, e.currency)}, credits ${money(e.credits_cents, e.currency)}</li>`)}</ul>` : ''}
${tb.totals_differ.length ? html`<p>The accounts whose running totals are not the sum of their postings:</p><ul>${tb.totals_differ.map((d) => html`<li><code>${d.account}</code>: running debits ${money(d.running_debits_cents, d.currency)} and credits ${money(d.running_credits_cents, d.currency)}, postings ${money(d.postings_debits_cents, d.currency)} and ${money(d.postings_credits_cents, d.currency)}</li>`)}</ul>` : ''}</div>`;
    return html`<p class="muted">${tb.mode} mode, as of ${instant(tb.as_of)}${past ? ' (postings recorded before then)' : ' (now)'}.</p>
${status}
<table class="panel" data-accounts="${tb.accounts.length}"><caption class="visually-hidden">Every account of the journal</caption>
<thead><tr><th scope="col">Account</th><th scope="col">Kind</th><th scope="col">Currency</th><th scope="col" class="num">Debits</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Balance</th></tr></thead>
<tbody>${tb.accounts.map(
      (a) =>
        html`<tr data-account="${a.account}"><th scope="row"><a href="${linkTo('/console/ledger/journal', { account: a.account })}">${a.account}</a></th><td>${kindOf(a.account)}</td><td>${a.currency}</td><td class="num">${money(a.debits_cents, a.currency)}</td><td class="num">${money(a.credits_cents, a.currency)}</td><td class="num">${money(a.balance_cents, a.currency)}</td></tr>`,
    )}</tbody>
<tfoot>${currencies.map(
      (t) =>
        html`<tr data-total="${t.currency}" data-debits="${t.debits_cents}" data-credits="${t.credits_cents}"><th scope="row" colspan="3">Total ${t.currency}</th><td class="num"><strong>${money(t.debits_cents, t.currency)}</strong></td><td class="num"><strong>${money(t.credits_cents, t.currency)}</strong></td><td>${t.debits_cents === t.credits_cents ? html`<span class="badge good">balanced</span>` : html`<span class="badge bad">off by ${money(t.debits_cents - t.credits_cents, t.currency)}</span>`}</td></tr>`,
    )}</tfoot></table>
${tb.accounts.length ? '' : html`<p class="muted">No postings in ${tb.mode} mode${past ? ' by then' : ''}.</p>`}`;
  }

  /** Platform revenue (fees on sales and key activations, net of what refunds gave back) against what the processor charged us, per UTC day. */
  private async revenueAgainstFees(mode: Mode): Promise<Html> {
    const today = Date.parse(`${utcDay(Date.now())}T00:00:00Z`);
    const days = Array.from({ length: REVENUE_DAYS }, (_, i) => utcDay(today - (REVENUE_DAYS - 1 - i) * DAY_MS));
    const totals = await this.journal.dailyTotals(mode, [...REVENUE_ACCOUNTS, Accounts.processorFees], { from: new Date(today - (REVENUE_DAYS - 1) * DAY_MS), to: new Date(today + DAY_MS) });
    const currencies = [...new Set(totals.map((t) => t.currency))];
    if (!currencies.length) currencies.push(DEFAULT_CURRENCY);
    return html`${currencies.map((currency) => {
      const per = (account: string) => {
        const byDay = new Map<string, number>();
        for (const t of totals) {
          if (t.currency !== currency || t.account !== account) continue;
          // Each in its own sign: revenue grows with credits, an expense with debits.
          byDay.set(t.day, (byDay.get(t.day) ?? 0) + (isDebitNormal(account) ? t.debits_cents - t.credits_cents : t.credits_cents - t.debits_cents));
        }
        return days.map((d) => byDay.get(d) ?? 0);
      };
      const fees = per(Accounts.feeRevenue);
      const activations = per(Accounts.activationRevenue);
      const revenue = days.map((_, i) => fees[i] + activations[i]);
      const processor = per(Accounts.processorFees);
      const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
      const label = currencies.length > 1 ? ` (${currency.toUpperCase()})` : '';
      return html`<div class="cards">
<div class="card"><div class="label">Platform revenue, ${REVENUE_DAYS} days${label}</div><div class="value" data-sum="revenue">${money(sum(revenue), currency)}</div></div>
<div class="card"><div class="label">Processor fees, ${REVENUE_DAYS} days${label}</div><div class="value" data-sum="processor-fees">${money(sum(processor), currency)}</div></div>
<div class="card"><div class="label">Net of processor fees${label}</div><div class="value">${money(sum(revenue) - sum(processor), currency)}</div></div>
</div>
${chart(
  {
    title: `Platform revenue and processor fees per day${label}`,
    x: days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000),
    series: [
      { label: 'Platform revenue', values: revenue },
      { label: 'Processor fees', values: processor },
    ],
    money: true,
  },
  `the last ${REVENUE_DAYS} UTC days; revenue is ${Accounts.feeRevenue} and ${Accounts.activationRevenue}, fees are ${Accounts.processorFees}`,
)}
<details class="panel"><summary>The numbers per day${label}</summary>
<table><thead><tr><th scope="col">Day</th><th scope="col" class="num">Fees on sales</th><th scope="col" class="num">Key activations</th><th scope="col" class="num">Processor fees</th><th scope="col" class="num">Net</th></tr></thead>
<tbody>${[...days.keys()].reverse().map(
        (i) =>
          html`<tr><td>${days[i]}</td><td class="num">${money(fees[i], currency)}</td><td class="num">${money(activations[i], currency)}</td><td class="num">${money(processor[i], currency)}</td><td class="num">${money(revenue[i] - processor[i], currency)}</td></tr>`,
      )}</tbody></table></details>`;
    })}`;
  }

  private journalFilters(request: PageRequest, accounts: string[] | undefined) {
    const range = dayRange(request.query);
    const account = request.query.account || undefined;
    if (account && accounts && !accounts.includes(account)) throw new ConsoleInputError(`There is no account "${account}" in the ${request.viewer.mode} journal.`);
    return { ...range, account };
  }

  private async journalPage(request: PageRequest): Promise<Html> {
    const { viewer, query } = request;
    // The accounts to choose from are the journal's own, as the trial balance lists them.
    const accounts = (await this.journal.trialBalance(viewer.mode)).accounts.map((a) => a.account);
    const choices = [...new Set(accounts)];
    const form = html`<form class="filters" method="get" action="/console/ledger/journal">
<div><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${query.from ?? ''}"></div>
<div><label for="to">To (UTC day)</label><input id="to" name="to" type="date" value="${query.to ?? ''}"></div>
<div><label for="account">Account</label><select id="account" name="account"><option value="">all accounts</option>${choices.map((a) => html`<option value="${a}"${query.account === a ? html` selected` : ''}>${a}</option>`)}</select></div>
<button type="submit">Filter</button></form>`;
    const keep = { from: query.from, to: query.to, account: query.account };
    let page;
    try {
      const filters = this.journalFilters(request, choices);
      page = await this.journal.postings(viewer.mode, filters, { cursor: query.cursor || undefined, limit: PAGE_ROWS });
    } catch (error) {
      if (!(error instanceof ConsoleInputError || (error instanceof ApiError && error.status === 400))) throw error;
      return html`${subnav('/console/ledger/journal')}${form}${errorNotice(error)}`;
    }
    const next = page.next_cursor ? linkTo('/console/ledger/journal', { ...keep, cursor: page.next_cursor }) : undefined;
    return html`${subnav('/console/ledger/journal')}${form}
<p><a href="${linkTo('/console/ledger/journal', { ...keep, format: 'csv' })}" download>Download CSV</a> <span class="muted">(every posting these filters select, in log order, up to ${count(CSV_ROWS)}; for more, <code>svc ledger journal</code>)</span></p>
<table class="panel" data-rows="${page.items.length}"><caption class="visually-hidden">Postings in log order</caption>
<thead><tr><th scope="col">Recorded (UTC)</th><th scope="col">Event</th><th scope="col">Account</th><th scope="col">Reference and processor id</th><th scope="col" class="num">Debit</th><th scope="col" class="num">Credit</th></tr></thead>
<tbody>${page.items.map((p) => this.postingRow(p))}</tbody></table>
${page.items.length ? '' : html`<p class="muted">No posting matches.</p>`}
<p>${query.cursor ? html`<a href="${linkTo('/console/ledger/journal', keep)}">First page</a> ` : ''}${next ? html`<a href="${next}" data-next>Next postings</a>` : ''}</p>`;
  }

  private postingRow(p: Posting): Html {
    // Date and time on two lines, the two ids likewise: the amounts stay in view at 1280 pixels.
    const [day, time] = instant(p.recorded_at).split(' ');
    return html`<tr data-posting="${p.posting_id}"><td>${day}<br>${time}</td><td>${p.event_type}</td><td><a href="${linkTo('/console/ledger/journal', { account: p.account })}">${p.account}</a></td><td>${p.reference ?? '—'}<br><span class="muted">${p.processor_ref ?? 'no processor id'}</span></td><td class="num">${p.debit_cents ? money(p.debit_cents, p.currency) : ''}</td><td class="num">${p.credit_cents ? money(p.credit_cents, p.currency) : ''}</td></tr>`;
  }

  private async journalCsv(request: PageRequest): Promise<{ fileName: string; body: string }> {
    const mode = request.viewer.mode;
    const filters = this.journalFilters(request, undefined);
    const lines: string[] = [POSTING_COLUMNS.join(',')];
    let cursor: string | undefined;
    do {
      const page = await this.journal.postings(mode, filters, { cursor, limit: Math.min(CSV_PAGE, CSV_ROWS - (lines.length - 1)) });
      for (const p of page.items) lines.push(POSTING_COLUMNS.map((c) => csvCell(p[c])).join(','));
      cursor = page.next_cursor ?? undefined;
    } while (cursor && lines.length - 1 < CSV_ROWS);
    const span = [request.query.from, request.query.to].filter(Boolean).join('_to_');
    return { fileName: `journal-${mode}${span ? `-${span}` : ''}.csv`, body: `${lines.join('\r\n')}\r\n` };
  }

  private async reconcilePage(request: PageRequest): Promise<Html> {
    const { viewer } = request;
    const whole = request.query.period === 'all';
    const given = request.query.from || request.query.to;
    // Unasked, the last two UTC days: yesterday whole and today so far. The whole history costs
    // what GET /admin/ledger/reconcile without a range costs (every clearing posting and processor
    // record), seconds on a busy ledger, so it is a link away rather than every visit's price.
    const query = whole || given ? request.query : { ...request.query, from: utcDay(Date.now() - DAY_MS), to: utcDay(Date.now()) };
    const form = html`<form class="filters" method="get" action="/console/ledger/reconcile">
<div><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${whole ? '' : (query.from ?? '')}"></div>
<div><label for="to">To (UTC day)</label><input id="to" name="to" type="date" value="${whole ? '' : (query.to ?? '')}"></div>
<button type="submit">Reconcile</button> ${whole ? html`<strong>The whole history</strong>` : html`<a href="/console/ledger/reconcile?period=all">The whole history</a>`}</form>`;
    let report: DetailedReconciliation;
    try {
      report = await this.reconciliation.reconcileInDetail(viewer.mode, whole ? {} : dayRange(query));
    } catch (error) {
      if (!(error instanceof ConsoleInputError)) throw error;
      return html`${subnav('/console/ledger/reconcile')}${form}${errorNotice(error)}`;
    }
    const differing = report.missing_in_ledger.length + report.missing_at_processor.length + report.amount_mismatches.length;
    const period = `${report.from ? instant(report.from) : 'the start'} to ${report.to ? instant(report.to) : 'now'}`;
    return html`${subnav('/console/ledger/reconcile')}${form}
<p class="muted">Our <code>${Accounts.clearing}</code> postings against the processor's own records, ${viewer.mode} mode, from ${period}. Each side is taken by its own time: look at items near the edges of a period before acting on them.</p>
${
  report.ok
    ? html`<p class="notice ok" role="status" data-reconciled="true">Reconciled: all ${count(report.matched)} items match; nothing is missing or altered on either side.</p>`
    : html`<p class="notice error" role="alert" data-reconciled="false">Not reconciled: ${count(differing)} ${differing === 1 ? 'item differs' : 'items differ'} (${count(report.matched)} match). Each is named below by the processor's id.</p>`
}
<div class="cards">
<div class="card"><div class="label">Matched</div><div class="value" data-count="matched">${count(report.matched)}</div></div>
<div class="card"><div class="label">Missing in our ledger</div><div class="value" data-count="missing_in_ledger">${count(report.missing_in_ledger.length)}</div><div class="muted">the processor moved money we have no event for</div></div>
<div class="card"><div class="label">Missing at the processor</div><div class="value" data-count="missing_at_processor">${count(report.missing_at_processor.length)}</div><div class="muted">we booked money the processor does not show</div></div>
<div class="card"><div class="label">Amounts differ</div><div class="value" data-count="amount_mismatches">${count(report.amount_mismatches.length)}</div><div class="muted">both name it, with other amounts</div></div>
</div>
${this.differences('Missing in our ledger', 'missing_in_ledger', report.missing_in_ledger)}
${this.differences('Missing at the processor', 'missing_at_processor', report.missing_at_processor)}
${this.differences('Amounts that differ', 'amount_mismatches', report.amount_mismatches)}
<h2>Matched</h2>
${this.matched(report.matched_items)}`;
  }

  private differences(title: string, kind: string, items: ReconciliationItem[]): Html {
    if (!items.length) return html``;
    return html`<h2>${title}</h2>
<table class="panel" data-differences="${kind}"><caption class="visually-hidden">${title}</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Processor id</th><th scope="col" class="num">Our ledger</th><th scope="col" class="num">Processor</th><th scope="col" class="num">Ours less theirs</th><th scope="col">Our events</th></tr></thead>
<tbody>${items.map(
      (i) =>
        html`<tr data-item="${i.processor_id ?? ''}"><td>${i.kind}</td><td><code>${i.processor_id ?? '(names none)'}</code></td><td class="num">${i.ledger_cents === null ? '—' : money(i.ledger_cents, i.currency)}</td><td class="num">${i.processor_cents === null ? '—' : money(i.processor_cents, i.currency)}</td><td class="num">${money((i.ledger_cents ?? 0) - (i.processor_cents ?? 0), i.currency)}</td><td>${i.event_ids.length ? i.event_ids.map((e, n) => html`${n ? ', ' : ''}<code>${e}</code>`) : html`<span class="muted">none</span>`}</td></tr>`,
    )}</tbody></table>`;
  }

  private matched(items: ReconciliationItem[]): Html {
    if (!items.length) return html`<p class="muted">Nothing to match in this period.</p>`;
    const byKind = new Map<string, { kind: string; currency: string; items: number; cents: number }>();
    for (const i of items) {
      const key = `${i.kind}|${i.currency}`;
      const k = byKind.get(key) ?? { kind: i.kind, currency: i.currency, items: 0, cents: 0 };
      k.items += 1;
      k.cents += i.ledger_cents ?? 0;
      byKind.set(key, k);
    }
    return html`<table class="panel" data-matched="${items.length}"><caption class="visually-hidden">Matched items by kind</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Currency</th><th scope="col" class="num">Items</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${[...byKind.values()].map((k) => html`<tr data-kind="${k.kind}"><td>${k.kind}</td><td>${k.currency}</td><td class="num">${count(k.items)}</td><td class="num">${money(k.cents, k.currency)}</td></tr>`)}</tbody></table>
<details class="panel"><summary>Each matched item${items.length > MATCHED_SHOWN ? ` (the first ${MATCHED_SHOWN} of ${count(items.length)})` : ''}</summary>
<table><thead><tr><th scope="col">Kind</th><th scope="col">Processor id</th><th scope="col" class="num">Amount</th><th scope="col">Our events</th></tr></thead>
<tbody>${items.slice(0, MATCHED_SHOWN).map(
      (i) => html`<tr><td>${i.kind}</td><td><code>${i.processor_id}</code></td><td class="num">${money(i.ledger_cents, i.currency)}</td><td>${i.event_ids.map((e, n) => html`${n ? ', ' : ''}<code>${e}</code>`)}</td></tr>`,
    )}</tbody></table></details>`;
  }
}
