import { AdminClient, CliError, query } from './admin-client';
import type { CliCommand } from './command-spec';
import { table } from './format';
import { REASON_OPTION } from './operator-commands';

/** `svc ledger ...`: the auditor's commands. Each exits non-zero when what it checks does not hold. */
export const LEDGER_COMMANDS: Record<string, CliCommand> = {
  'ledger verify': {
    usage: 'ledger verify [--account ID_OR_SLUG] [--mode test|live]',
    examples: ['svc ledger verify', 'svc ledger verify --account acme-robotics --mode live'],
    options: {
      account: { type: 'string', description: 'Check only this account’s ledger (id or slug); every ledger when not given.' },
      mode: { type: 'string', description: 'Check only test or live; both when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/ledger/verify${query({ account: o.account, mode: o.mode })}`),
    print: (r) =>
      r.ok
        ? `ledger verified: ${r.ledgers_checked} ledgers, ${r.transactions_checked} transactions and ${r.journal.postings_checked} journal postings match the event log`
        : r.first_difference
          ? `ledger differs from the event log: ${describeDifference(r.first_difference)}`
          : ['the journal does not hold:', ...r.journal.problems.map((p: { check: string; message: string }) => `  ${p.check}: ${p.message}`)].join('\n'),
    failure: (r) =>
      r.ok
        ? undefined
        : r.first_difference
          ? new CliError(describeDifference(r.first_difference), 'ledger_mismatch')
          : new CliError(r.journal.problems[0].message, 'journal_mismatch'),
  },
  'ledger export': {
    usage: 'ledger export --account ID_OR_SLUG --mode test|live [--format csv|json]',
    examples: ['svc ledger export --account acme-robotics --mode live --format csv > ledger.csv'],
    options: {
      account: { type: 'string', required: true, description: 'The creator whose balance transactions to export, by id or slug.' },
      mode: { type: 'string', required: true, description: 'test or live: each mode is its own ledger.' },
      format: { type: 'string', description: 'csv (the default, one row a line) or json (the lines as the API answers them).' },
    },
    run: (client, o) => {
      if (o.format !== undefined && o.format !== 'csv' && o.format !== 'json') {
        throw new CliError(`--format must be csv or json, got "${o.format}"`, 'usage', 2);
      }
      return client.request('GET', `/admin/ledger/export${query({ account: o.account, mode: o.mode })}`);
    },
    print: (r, o) => (o.format === 'json' ? JSON.stringify(r, null, 2) : toCsv(r.items.map(transactionRow), TRANSACTION_COLUMNS)),
  },
  'ledger trial-balance': {
    usage: 'ledger trial-balance --mode test|live [--as-of ISO_8601]',
    examples: ['svc ledger trial-balance --mode live', 'svc ledger trial-balance --mode live --as-of 2026-10-01T00:00:00Z --json'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: each mode has its own books.' },
      'as-of': { type: 'string', description: 'An ISO 8601 instant: the balances of what was recorded strictly before it; now when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/ledger/trial-balance${query({ mode: o.mode, as_of: o['as-of'] })}`),
    print: (r) =>
      [
        `trial balance, ${r.mode} mode, as of ${r.as_of}`,
        table(r.accounts, ['account', 'currency', 'debits_cents', 'credits_cents', 'balance_cents']),
        ...r.currency_totals.map((t: any) => `total ${t.currency}: debits ${t.debits_cents}, credits ${t.credits_cents}${t.debits_cents === t.credits_cents ? ' (balanced)' : ' (NOT BALANCED)'}`),
      ].join('\n'),
    failure: (r) => (r.balanced ? undefined : new CliError(`the journal does not balance: ${describeUnbalanced(r.unbalanced_events, r.totals_differ ?? [])}`, 'ledger_unbalanced')),
  },
  'ledger parked': {
    usage: 'ledger parked --mode test|live',
    examples: ['svc ledger parked --mode live', 'svc ledger parked --mode live --json'],
    options: { mode: { type: 'string', required: true, description: 'test or live: which processor account’s parked events to list.' } },
    run: (client, o) => client.request('GET', `/admin/ledger/parked${query({ mode: o.mode })}`),
    print: (r) =>
      r.items.length
        ? table(r.items, ['processor_event_id', 'processor_event_type', 'object_id', 'payment_reference', 'amount_cents', 'currency', 'reason', 'parked_at'])
        : 'no processor event is parked',
    failure: (r) => (r.items.length ? new CliError(`${r.items.length} processor events are parked`, 'events_parked') : undefined),
  },
  'disputes list': {
    usage: 'disputes list --mode test|live [--status open|won|lost]',
    examples: ['svc disputes list --mode test', 'svc disputes list --mode live --status open --json'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: which mode’s disputes to list.' },
      status: { type: 'string', description: 'Only disputes that are open, won or lost; all of them when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/disputes${query({ mode: o.mode, status: o.status })}`),
    print: (r) =>
      r.items.length
        ? table(r.items, ['id', 'status', 'purchase_id', 'amount_cents', 'dispute_fee_cents', 'currency', 'reason', 'created_at', 'closed_at'])
        : 'no disputes',
  },
  'disputes close': {
    usage: 'disputes close DISPUTE_ID --won|--lost [--reason TEXT]',
    examples: ['svc disputes close sbx_dp_... --won --reason "evidence accepted"', 'svc disputes close sbx_dp_... --lost'],
    options: {
      won: { type: 'boolean', description: 'The bank decided for the seller: the withheld money is released.' },
      lost: { type: 'boolean', description: 'The bank decided for the buyer: the buyer keeps the money and the download is revoked.' },
      ...REASON_OPTION,
    },
    positionals: ['DISPUTE_ID'],
    run: (client, o, [disputeId]) => {
      if (Boolean(o.won) === Boolean(o.lost)) throw new CliError('give exactly one of --won or --lost', 'usage', 2);
      return client.request('POST', `/admin/disputes/${encodeURIComponent(disputeId)}/close`, { outcome: o.won ? 'won' : 'lost', ...(o.reason === undefined ? {} : { reason: o.reason }) });
    },
    print: (r) =>
      r.status === 'won'
        ? `dispute ${r.id} won: ${r.amount_cents} ${r.currency} came back and the seller's withheld money is released`
        : `dispute ${r.id} lost: the buyer keeps ${r.amount_cents} ${r.currency}; purchase ${r.purchase_id} is disputed and its download revoked`,
  },
  'ledger reconcile': {
    usage: 'ledger reconcile --mode test|live [--from ISO_8601] [--to ISO_8601]',
    examples: ['svc ledger reconcile --mode live --from 2026-09-01 --to 2026-10-01', 'svc ledger reconcile --mode test --json'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: which processor account to reconcile with.' },
      from: { type: 'string', description: 'An ISO 8601 instant or date: reconcile from here; the start of the books when not given.' },
      to: { type: 'string', description: 'An ISO 8601 instant or date: reconcile up to here (exclusive); now when not given.' },
    },
    run: (client, o) => client.request('GET', `/admin/ledger/reconcile${query({ mode: o.mode, from: o.from, to: o.to })}`),
    print: (r) =>
      [
        `reconciled ${r.mode} ${r.from ?? 'start'} .. ${r.to ?? 'now'} with the processor: ${r.matched} matched`,
        ...r.missing_in_ledger.map((i: any) => `  missing in the ledger: ${describeItem(i)}`),
        ...r.missing_at_processor.map((i: any) => `  missing at the processor: ${describeItem(i)}`),
        ...r.amount_mismatches.map((i: any) => `  amounts differ: ${describeItem(i)}`),
      ].join('\n'),
    failure: (r) =>
      r.ok
        ? undefined
        : new CliError(`${r.missing_in_ledger.length} missing in the ledger, ${r.missing_at_processor.length} missing at the processor, ${r.amount_mismatches.length} amounts differ`, 'ledger_unreconciled'),
  },
  'ledger adopt': {
    usage: 'ledger adopt PROCESSOR_ID --mode test|live --reason TEXT',
    examples: ['svc ledger adopt re_... --mode live --reason "refund lost to a crash on 2026-11-02, ticket 4711"'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: whose processor account the movement is in.' },
      reason: { type: 'string', required: true, description: 'Why it is booked by hand; kept with the booking, for the auditor.' },
    },
    positionals: ['PROCESSOR_ID'],
    // Books a refund or fee that svc ledger reconcile lists missing_in_ledger (issue 38, defect 5); anything else is a 4xx and books nothing.
    run: (client, o, [processorId]) => client.request('POST', '/admin/ledger/adopt', { mode: o.mode, processor_id: processorId, reason: o.reason }),
    print: (r) =>
      `adopted the processor's ${r.kind} ${r.processor_id}: ${r.amount_cents} ${r.currency} of purchase ${r.purchase.id} (now ${r.purchase.amount_refunded_cents} refunded), by ${r.actor}: ${r.reason}`,
  },
  'ledger journal': {
    usage: 'ledger journal --mode test|live [--from ISO_8601] [--to ISO_8601] [--format csv|jsonl]',
    examples: ['svc ledger journal --mode live --from 2026-09-01 --to 2026-10-01 > september.csv', 'svc ledger journal --mode live --format jsonl'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: each mode has its own journal.' },
      from: { type: 'string', description: 'An ISO 8601 instant or date: postings recorded from here; the first when not given.' },
      to: { type: 'string', description: 'An ISO 8601 instant or date: postings recorded before here; up to now when not given.' },
      format: { type: 'string', description: 'csv (the default) or jsonl (one JSON posting a line).' },
    },
    run: async (client, o) => {
      if (o.format !== undefined && o.format !== 'csv' && o.format !== 'jsonl') {
        throw new CliError(`--format must be csv or jsonl, got "${o.format}"`, 'usage', 2);
      }
      return { items: await allPostings(client, { mode: o.mode, from: o.from, to: o.to }) };
    },
    print: (r, o) => (o.format === 'jsonl' ? r.items.map((p: unknown) => JSON.stringify(p)).join('\n') : toCsv(r.items, POSTING_COLUMNS)),
  },
};

/** Every page of GET /admin/ledger/journal. */
async function allPostings(client: AdminClient, range: Record<string, string | undefined>): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request('GET', `/admin/ledger/journal${query({ ...range, cursor, limit: '5000' })}`);
    items.push(...page.items);
    cursor = page.has_more ? page.next_cursor : undefined;
  } while (cursor);
  return items;
}

function describeItem(i: { kind: string; processor_id: string | null; currency: string; ledger_cents: number | null; processor_cents: number | null; event_ids: string[] }): string {
  const side = (cents: number | null) => (cents === null ? '-' : String(cents));
  return `${i.kind} ${i.processor_id ?? '(no processor id)'}: ledger ${side(i.ledger_cents)}, processor ${side(i.processor_cents)} ${i.currency}${i.event_ids.length ? ` (events ${i.event_ids.join(', ')})` : ''}`;
}

function describeUnbalanced(
  events: { event_id: string; event_type: string; currency: string; debits_cents: number; credits_cents: number }[],
  totals: { account: string; currency: string; postings_debits_cents: number; postings_credits_cents: number; running_debits_cents: number; running_credits_cents: number }[],
): string {
  return [
    ...events.map((e) => `event ${e.event_id} (${e.event_type}) posts ${e.debits_cents} debit and ${e.credits_cents} credit ${e.currency}`),
    ...totals.map(
      (d) =>
        `account ${d.account} (${d.currency}) has running totals ${d.running_debits_cents} debit and ${d.running_credits_cents} credit but its postings add up to ${d.postings_debits_cents} and ${d.postings_credits_cents}`,
    ),
  ].join('; ');
}

function describeDifference(d: { account_id: string; mode: string; transaction_id: string | null; field: string; expected: unknown; actual: unknown }): string {
  const where = d.transaction_id ? `transaction ${d.transaction_id}` : 'summary';
  return `account ${d.account_id} (${d.mode}), ${where}: ${d.field} is ${JSON.stringify(d.actual)} in the read model but ${JSON.stringify(d.expected)} from the events`;
}

const TRANSACTION_COLUMNS = ['id', 'type', 'amount_cents', 'fee_cents', 'net_cents', 'currency', 'status', 'created_at', 'purchase_id', 'asset_slug', 'asset_title', 'payout_id', 'description', 'reporting_category', 'balance_after_cents'];

// actor and reason: who recorded the posting's event (operator name or API key id) and why; empty for events recorded before actors were.
const POSTING_COLUMNS = ['posting_id', 'event_id', 'event_type', 'position', 'recorded_at', 'mode', 'account', 'currency', 'debit_cents', 'credit_cents', 'reference', 'processor_ref', 'actor', 'reason'];

/** A balance transaction as one flat CSV row. */
const transactionRow = (t: any) => ({
  ...t,
  purchase_id: t.source.purchase_id,
  asset_slug: t.source.asset?.slug,
  asset_title: t.source.asset?.title,
  payout_id: t.source.payout_id,
});

/**
 * RFC 4180 CSV. Asset titles are written by sellers, so a text cell starting with = + - @
 * gets a leading apostrophe: a spreadsheet must not run it as a formula.
 */
export function toCsv(rows: Record<string, unknown>[], columns: string[]): string {
  const cell = (value: unknown) => {
    if (value === null || value === undefined) return '';
    let text = String(value);
    if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [columns.join(','), ...rows.map((row) => columns.map((c) => cell(row[c])).join(','))].join('\n');
}
