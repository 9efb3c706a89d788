import { CliError, query } from './admin-client';
import type { CliCommand } from './command-spec';
import { table } from './format';
import { toCsv } from './ledger-commands';

/** The report's CSV: one figure a row, each named by its section and item (docs/ledger.md, "Reports"). */
export const REPORT_COLUMNS = ['section', 'item', 'currency', 'amount_cents', 'account_id', 'payout_id', 'balance_transaction_id', 'purchase_id'];

const INCOME_ITEMS = ['fee_revenue', 'activation_revenue', 'processor_fees', 'dispute_fees', 'adjustments', 'net_income'];
const SHEET_ITEMS: [group: string, items: string[]][] = [
  ['assets', ['clearing', 'disputes_open', 'receivables', 'total']],
  ['liabilities', ['payables', 'in_transit', 'withheld', 'suspense', 'total']],
  ['equity', ['retained_earnings', 'total']],
];
const RECONCILIATION_ITEMS = ['creators_platform_fees', 'lost_disputes', 'adjustments', 'booked_in_another_period', 'fee_revenue', 'unexplained'];

/** Every figure of the report as a CSV row. */
export function reportRows(r: any): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const c of r.currencies) {
    const row = (section: string, item: string, amount: number, extra: Record<string, unknown> = {}) => rows.push({ section, item, currency: c.currency, amount_cents: amount, ...extra });
    for (const item of INCOME_ITEMS) row('income_statement', item, c.income_statement[`${item}_cents`]);
    for (const section of ['opening_balance_sheet', 'balance_sheet']) {
      for (const [group, items] of SHEET_ITEMS) for (const item of items) row(section, `${group}.${item}`, c[section][group][`${item}_cents`]);
    }
    for (const item of RECONCILIATION_ITEMS) row('fee_reconciliation', item, c.fee_reconciliation[`${item}_cents`]);
    for (const creator of c.fee_reconciliation.creators) row('fee_reconciliation', 'creator_platform_fees', creator.platform_fee_cents, { account_id: creator.account_id });
  }
  for (const p of r.payouts) {
    rows.push({ section: 'payout', item: p.status, currency: p.currency, amount_cents: p.amount_cents, account_id: p.account_id, payout_id: p.payout_id });
    for (const line of p.balance_transactions) {
      rows.push({ section: 'payout_line', item: line.type, currency: p.currency, amount_cents: line.net_cents, account_id: p.account_id, payout_id: p.payout_id, balance_transaction_id: line.id, purchase_id: line.purchase_id });
    }
  }
  return rows;
}

/** An expense as the statement prints it: with its minus sign, when there is one. */
const expense = (cents: number) => (cents === 0 ? ' 0' : `-${cents}`);

/** The report as text: the statements per currency, then the payouts. */
function printReport(r: any): string {
  const out = [`ledger report, ${r.mode} mode, ${r.from} .. ${r.to} (to exclusive)`];
  for (const c of r.currencies) {
    const i = c.income_statement;
    const s = c.balance_sheet;
    const f = c.fee_reconciliation;
    out.push(
      '',
      `income statement (${c.currency})`,
      `  fee revenue          ${i.fee_revenue_cents}`,
      `  activation revenue   ${i.activation_revenue_cents}`,
      `  processor fees      ${expense(i.processor_fees_cents)}`,
      `  dispute fees        ${expense(i.dispute_fees_cents)}`,
      `  adjustments         ${expense(i.adjustments_cents)}`,
      `  net income           ${i.net_income_cents}`,
      `balance sheet at ${s.at} (${c.currency})${s.balanced ? '' : ' NOT BALANCED'}`,
      `  assets: clearing ${s.assets.clearing_cents}, disputes open ${s.assets.disputes_open_cents}, receivables ${s.assets.receivables_cents} = ${s.assets.total_cents}`,
      `  liabilities: payables ${s.liabilities.payables_cents}, in transit ${s.liabilities.in_transit_cents}, withheld ${s.liabilities.withheld_cents}, suspense ${s.liabilities.suspense_cents} = ${s.liabilities.total_cents}`,
      `  equity: retained earnings ${s.equity.retained_earnings_cents} (${c.opening_balance_sheet.equity.retained_earnings_cents} at ${r.from})`,
      `fee revenue reconciliation (${c.currency})${f.reconciles ? '' : ' DOES NOT RECONCILE'}`,
      `  creators' platform fees ${f.creators_platform_fees_cents} - lost disputes ${f.lost_disputes_cents} + adjustments ${f.adjustments_cents} + booked in another period ${f.booked_in_another_period_cents} = ${f.fee_revenue_cents - f.unexplained_cents}; platform:fee_revenue ${f.fee_revenue_cents}`,
    );
  }
  out.push('', `payouts (${r.payouts.length})`);
  out.push(
    table(
      r.payouts.map((p: any) => ({ ...p, lines: p.balance_transactions.length, matches: p.matches ? 'yes' : 'NO' })),
      ['payout_id', 'account_id', 'status', 'amount_cents', 'currency', 'lines', 'lines_net_cents', 'matches'],
    ),
  );
  return out.join('\n');
}

/** `svc ledger report` (issue 38, section 3): the statements finance asks for, from the journal. */
export const REPORT_COMMANDS: Record<string, CliCommand> = {
  'ledger report': {
    usage: 'ledger report --mode test|live --from ISO_8601 --to ISO_8601 [--csv]',
    examples: ['svc ledger report --mode live --from 2026-10-01 --to 2026-11-01', 'svc ledger report --mode live --from 2026-10-01 --to 2026-11-01 --csv > october.csv'],
    options: {
      mode: { type: 'string', required: true, description: 'test or live: each mode has its own books.' },
      from: { type: 'string', required: true, description: 'An ISO 8601 date or instant with its offset: the period starts here (inclusive).' },
      to: { type: 'string', required: true, description: 'An ISO 8601 date or instant with its offset: the period ends before here; the balance sheet is as of it.' },
      csv: { type: 'boolean', description: 'Print the report as CSV, one figure a row (section, item, currency, amount_cents, ...).' },
    },
    run: (client, o) => {
      if (o.csv && o.json) throw new CliError('give --csv or --json, not both', 'usage', 2);
      return client.request('GET', `/admin/ledger/report${query({ mode: o.mode, from: o.from, to: o.to })}`);
    },
    print: (r, o) => (o.csv ? toCsv(reportRows(r), REPORT_COLUMNS) : printReport(r)),
    failure: (r) => {
      if (r.ok) return undefined;
      const failed = Object.entries(r.checks as Record<string, boolean>).filter(([, ok]) => !ok).map(([name]) => name);
      return new CliError(`the report's checks do not hold: ${failed.join(', ')}`, 'report_does_not_reconcile');
    },
  },
};
