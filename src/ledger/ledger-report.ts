/**
 * The reports finance asks for (issue 38, section 3; `svc ledger report`): for a period
 * [from, to) of one mode, the income statement, the balance sheet at `to` (and at `from`), the
 * fee revenue reconciled with what creators were charged, and each payout with the balance
 * transactions it paid. Every figure of the statements is re-added from the journal's postings
 * (never from running totals or summaries); the cut-off is the books' one rule (`cutoffParam`):
 * `from` at or after, `to` strictly before, by the postings' booking time (`recorded_at`).
 * docs/ledger.md, "Reports", is its prose.
 */
import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database, Queryable } from '../database/database';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { inMode } from '../platform/owner-scope';
import { cutoffParam } from '../platform/instant';
import { Accounts, isDebitNormal, trialBalanceRow } from './journal';
import { LedgerQueries } from './ledger-queries';

/** Income and expenses of the period, in cents, each in its own sign (revenue and expenses both positive). */
export interface IncomeStatement {
  /** platform:fee_revenue: the platform's fees on sales, less fees returned on refunds and lost with disputes. */
  fee_revenue_cents: number;
  /** platform:activation_revenue: premium key activations. */
  activation_revenue_cents: number;
  /** platform:processor_fees charged on payments (ProcessorFeeCharged, adjusting entries). */
  processor_fees_cents: number;
  /** platform:processor_fees charged when a dispute opened (the processor keeps them whatever the outcome). */
  dispute_fees_cents: number;
  /** platform:adjustments: write-offs and goodwill credits booked by hand. */
  adjustments_cents: number;
  /** Revenue less expenses. */
  net_income_cents: number;
}

/** The platform's position at an instant: what the postings booked strictly before it add up to. */
export interface BalanceSheet {
  at: string;
  assets: {
    /** processor:clearing: what the processor holds for the platform. */
    clearing_cents: number;
    /** platform:disputes: disputed amounts the processor withdrew, until the disputes close. */
    disputes_open_cents: number;
    /** Creators' payables below zero: what creators owe the platform (creator:<id>:receivable). */
    receivables_cents: number;
    total_cents: number;
  };
  liabilities: {
    /** Creators' payables: what the platform owes creators and has not sent. */
    payables_cents: number;
    /** Payouts sent and not arrived. */
    in_transit_cents: number;
    /** Creators' net of open disputes, held. */
    withheld_cents: number;
    /** Duplicate payments not refunded yet. */
    suspense_cents: number;
    total_cents: number;
  };
  equity: {
    /** Every revenue less every expense booked before `at`. */
    retained_earnings_cents: number;
    total_cents: number;
  };
  /** Assets = liabilities + equity. */
  balanced: boolean;
}

/** platform:fee_revenue of the period against the platform fees on creators' balance transactions. */
export interface FeeReconciliation {
  /** The platform fees on the creators' sale and refund lines created in the period (what their summaries add up). */
  creators_platform_fees_cents: number;
  /** Less the fees on sales whose disputes were lost in the period: the creators keep seeing them, the platform no longer has them. */
  lost_disputes_cents: number;
  /** Adjusting entries on platform:fee_revenue in the period. */
  adjustments_cents: number;
  /** Sale and refund fees booked in the period that happened in another (booked after a close), less those of the period booked in a later one. */
  booked_in_another_period_cents: number;
  /** platform:fee_revenue of the period, from the journal. */
  fee_revenue_cents: number;
  /** fee_revenue - (creators - lost disputes + adjustments + booked in another period): 0 when the books agree. */
  unexplained_cents: number;
  reconciles: boolean;
  creators: { account_id: string; sales_fee_cents: number; refunds_fee_cents: number; platform_fee_cents: number }[];
}

/** One payout of the period and the balance transactions it paid. */
export interface PayoutReconciliation {
  payout_id: string;
  account_id: string;
  currency: string;
  /** As the journal has it at the end of the period. */
  status: 'in_transit' | 'paid' | 'failed';
  amount_cents: number;
  /** When it was sent (PayoutInitiated), when it arrived (PayoutPaid) or failed; null when that was not in the period. */
  initiated_at: string | null;
  paid_at: string | null;
  failed_at: string | null;
  /** The creator's sale, refund, dispute and adjustment lines it paid out (none for a failed one). */
  balance_transactions: { id: string; type: string; amount_cents: number; fee_cents: number; net_cents: number; created_at: string; purchase_id: string | null }[];
  /** The lines' net: equal to the amount a payout paid. */
  lines_net_cents: number;
  matches: boolean;
}

export interface CurrencyReport {
  currency: string;
  income_statement: IncomeStatement;
  opening_balance_sheet: BalanceSheet;
  balance_sheet: BalanceSheet;
  fee_reconciliation: FeeReconciliation;
}

export interface LedgerReport {
  object: 'ledger_report';
  mode: Mode;
  from: string;
  to: string;
  currencies: CurrencyReport[];
  payouts: PayoutReconciliation[];
  /** Each check of the report; `ok` when all hold (the CLI exits 1 otherwise). */
  checks: { balance_sheets_balance: boolean; net_income_is_change_in_equity: boolean; fee_revenue_reconciles: boolean; payouts_match: boolean };
  ok: boolean;
}

/** `from` and `to` of a report: both required, ISO 8601 with an offset (or a date), from before to; 400 naming the field otherwise. */
export function reportRange(from: unknown, to: unknown): { from: Date; to: Date } {
  if (from === undefined || from === '') throw Errors.validationFailed('Invalid field "from": required: the first instant of the period (ISO 8601), such as 2026-10-01.');
  if (to === undefined || to === '') throw Errors.validationFailed('Invalid field "to": required: the instant the period ends, exclusive (ISO 8601), such as 2026-11-01.');
  const range = { from: cutoffParam('from', from)!, to: cutoffParam('to', to)! };
  if (range.from >= range.to) throw Errors.validationFailed('Invalid field "from": must be before "to".');
  return range;
}

type Sums = Map<string, { debits: number; credits: number }>;
const PAYOUT_EVENTS = ['PayoutInitiated', 'PayoutPaid', 'PayoutFailed'];
const MANUAL_EVENTS = ['ManualEntryRecorded', 'AdjustmentRecorded'];

@Injectable()
export class LedgerReports {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    private readonly ledger: LedgerQueries,
  ) {}

  /** The report of [from, to) in one mode, every read on one repeatable-read snapshot. */
  async report(mode: Mode, range: { from: Date; to: Date }): Promise<LedgerReport> {
    const from = range.from.toISOString();
    const to = range.to.toISOString();
    return this.db.transaction(async (tx) => {
      await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      const [closing, opening, period, occurred, creators, payouts] = [
        await this.balancesBefore(tx, mode, to),
        await this.balancesBefore(tx, mode, from),
        await this.periodSums(tx, mode, from, to),
        await this.feesThatOccurred(tx, mode, from, to),
        await this.creatorFees(tx, mode, from, to),
        await this.payouts(tx, mode, from, to),
      ];
      const currencies = [...new Set([...closing.keys(), ...creators.keys()])].sort();
      const reports = currencies.map((currency): CurrencyReport => {
        const sums = period.get(currency) ?? new Map();
        const credit = (key: string) => (sums.get(key)?.credits ?? 0) - (sums.get(key)?.debits ?? 0);
        const sumOf = (prefix: string, pick: (key: string) => number) => [...sums.keys()].filter((k) => k.startsWith(prefix)).reduce((s, k) => s + pick(k), 0);
        const feeRevenue = sumOf(`${Accounts.feeRevenue}|`, credit);
        const disputeFees = 0 - credit(`${Accounts.processorFees}|DisputeOpened`);
        const income: IncomeStatement = {
          fee_revenue_cents: feeRevenue,
          activation_revenue_cents: sumOf(`${Accounts.activationRevenue}|`, credit),
          processor_fees_cents: 0 - sumOf(`${Accounts.processorFees}|`, credit) - disputeFees,
          dispute_fees_cents: disputeFees,
          adjustments_cents: 0 - sumOf(`${Accounts.adjustments}|`, credit),
          net_income_cents: 0,
        };
        income.net_income_cents = income.fee_revenue_cents + income.activation_revenue_cents - income.processor_fees_cents - income.dispute_fees_cents - income.adjustments_cents;

        const mine = creators.get(currency) ?? [];
        const creatorsFees = mine.reduce((s, c) => s + c.platform_fee_cents, 0);
        const salesAndRefunds = credit(`${Accounts.feeRevenue}|SaleRecorded`) + credit(`${Accounts.feeRevenue}|RefundRecorded`);
        const reconciliation = {
          creators_platform_fees_cents: creatorsFees,
          lost_disputes_cents: 0 - credit(`${Accounts.feeRevenue}|DisputeClosed`),
          adjustments_cents: MANUAL_EVENTS.reduce((s, type) => s + credit(`${Accounts.feeRevenue}|${type}`), 0),
          booked_in_another_period_cents: salesAndRefunds - (occurred.get(currency) ?? 0),
          fee_revenue_cents: feeRevenue,
        };
        const unexplained =
          feeRevenue - (reconciliation.creators_platform_fees_cents - reconciliation.lost_disputes_cents + reconciliation.adjustments_cents + reconciliation.booked_in_another_period_cents);
        return {
          currency,
          income_statement: income,
          opening_balance_sheet: balanceSheet(from, opening.get(currency)),
          balance_sheet: balanceSheet(to, closing.get(currency)),
          fee_reconciliation: { ...reconciliation, unexplained_cents: unexplained, reconciles: unexplained === 0, creators: mine },
        };
      });
      const checks = {
        balance_sheets_balance: reports.every((r) => r.balance_sheet.balanced && r.opening_balance_sheet.balanced),
        net_income_is_change_in_equity: reports.every(
          (r) => r.income_statement.net_income_cents === r.balance_sheet.equity.retained_earnings_cents - r.opening_balance_sheet.equity.retained_earnings_cents,
        ),
        fee_revenue_reconciles: reports.every((r) => r.fee_reconciliation.reconciles),
        payouts_match: payouts.every((p) => p.matches),
      };
      return { object: 'ledger_report', mode, from, to, currencies: reports, payouts, checks, ok: Object.values(checks).every(Boolean) };
    });
  }

  /** Every account's debits and credits booked strictly before `before`, by currency. */
  private async balancesBefore(q: Queryable, mode: Mode, before: string): Promise<Map<string, Sums>> {
    const s = inMode(mode);
    const { rows } = await q.query<{ account: string; currency: string; debits: string; credits: string }>(
      `SELECT account, currency, sum(debit_cents) AS debits, sum(credit_cents) AS credits FROM journal_postings
        WHERE ${s.where()} AND recorded_at < ${s.param(before)} GROUP BY account, currency`,
      s.params,
    );
    return byCurrency(rows, (r) => r.account);
  }

  /** The platform accounts' debits and credits booked in [from, to), by currency, account and event type. */
  private async periodSums(q: Queryable, mode: Mode, from: string, to: string): Promise<Map<string, Sums>> {
    const s = inMode(mode);
    const { rows } = await q.query<{ account: string; event_type: string; currency: string; debits: string; credits: string }>(
      `SELECT account, event_type, currency, sum(debit_cents) AS debits, sum(credit_cents) AS credits FROM journal_postings
        WHERE ${s.where()} AND account LIKE 'platform:%' AND recorded_at >= ${s.param(from)} AND recorded_at < ${s.param(to)}
        GROUP BY account, event_type, currency`,
      s.params,
    );
    return byCurrency(rows, (r) => `${r.account}|${r.event_type}`);
  }

  /**
   * The fee revenue of sales and refunds that happened in [from, to), wherever they were booked
   * (occurred_at, else recorded_at). A late event is booked forward, never back, so nothing that
   * happened from `from` on was booked before it: the bound lets the index read only the period on.
   */
  private async feesThatOccurred(q: Queryable, mode: Mode, from: string, to: string): Promise<Map<string, number>> {
    const s = inMode(mode);
    const { rows } = await q.query<{ currency: string; cents: string }>(
      `SELECT currency, sum(credit_cents) - sum(debit_cents) AS cents FROM journal_postings
        WHERE ${s.where()} AND account = ${s.param(Accounts.feeRevenue)} AND event_type IN ('SaleRecorded', 'RefundRecorded')
          AND recorded_at >= ${s.param(from)} AND COALESCE(occurred_at, recorded_at) >= ${s.param(from)} AND COALESCE(occurred_at, recorded_at) < ${s.param(to)}
        GROUP BY currency`,
      s.params,
    );
    return new Map(rows.map((r) => [r.currency, Number(r.cents)]));
  }

  /** The platform fees on each creator's sale and refund lines created in [from, to) (the creator ledger, not the journal). */
  private async creatorFees(q: Queryable, mode: Mode, from: string, to: string): Promise<Map<string, FeeReconciliation['creators']>> {
    const s = inMode(mode);
    const { rows } = await q.query<{ account_id: string; currency: string; sales: string; refunds: string }>(
      `SELECT account_id, currency, sum(CASE WHEN type = 'sale' THEN fee_cents ELSE 0 END) AS sales, sum(CASE WHEN type = 'refund' THEN fee_cents ELSE 0 END) AS refunds
         FROM balance_transactions
        WHERE ${s.where()} AND type IN ('sale', 'refund') AND created_at >= ${s.param(from)} AND created_at < ${s.param(to)}
        GROUP BY account_id, currency ORDER BY account_id, currency`,
      s.params,
    );
    const result = new Map<string, FeeReconciliation['creators']>();
    for (const r of rows) {
      const [sales, refunds] = [Number(r.sales), Number(r.refunds)];
      result.set(r.currency, [...(result.get(r.currency) ?? []), { account_id: r.account_id, sales_fee_cents: sales, refunds_fee_cents: refunds, platform_fee_cents: sales + refunds }]);
    }
    return result;
  }

  /** Every payout with a posting booked in [from, to), in log order, and the lines it paid. */
  private async payouts(q: Queryable, mode: Mode, from: string, to: string): Promise<PayoutReconciliation[]> {
    const s = inMode(mode);
    const { rows } = await q.query<{ reference: string; event_type: string; account: string; currency: string; debit_cents: string; credit_cents: string; recorded_at: Date | string }>(
      `SELECT reference, event_type, account, currency, debit_cents, credit_cents, recorded_at FROM journal_postings
        WHERE ${s.where()} AND event_type = ANY(${s.param(PAYOUT_EVENTS)}::text[]) AND recorded_at >= ${s.param(from)} AND recorded_at < ${s.param(to)}
        ORDER BY position, posting_id`,
      s.params,
    );
    const found = new Map<string, PayoutReconciliation>();
    for (const r of rows) {
      const accountId = /^creator:(.+):(payable|in_transit)$/.exec(r.account)?.[1];
      const p = found.get(r.reference) ?? {
        payout_id: r.reference,
        account_id: accountId ?? '',
        currency: r.currency,
        status: 'in_transit' as const,
        amount_cents: 0,
        initiated_at: null,
        paid_at: null,
        failed_at: null,
        balance_transactions: [],
        lines_net_cents: 0,
        matches: true,
      };
      const at = new Date(r.recorded_at).toISOString();
      p.amount_cents = Math.max(p.amount_cents, Number(r.debit_cents), Number(r.credit_cents));
      if (r.event_type === 'PayoutInitiated') p.initiated_at = at;
      if (r.event_type === 'PayoutPaid') (p.paid_at = at), (p.status = 'paid');
      if (r.event_type === 'PayoutFailed') (p.failed_at = at), (p.status = 'failed');
      found.set(r.reference, p);
    }
    const result: PayoutReconciliation[] = [];
    for (const p of found.values()) {
      const lines = p.status === 'failed' ? [] : await this.ledger.paidBy({ accountId: p.account_id, mode }, p.payout_id, q);
      const net = lines.reduce((sum, l) => sum + l.net_cents, 0);
      result.push({
        ...p,
        balance_transactions: lines.map((l) => ({ id: l.id, type: l.type, amount_cents: l.amount_cents, fee_cents: l.fee_cents, net_cents: l.net_cents, created_at: l.created_at, purchase_id: l.source.purchase_id })),
        lines_net_cents: net,
        matches: p.status === 'failed' || net === p.amount_cents,
      });
    }
    return result;
  }
}

function byCurrency<R extends { currency: string; debits: string; credits: string }>(rows: R[], key: (r: R) => string): Map<string, Sums> {
  const result = new Map<string, Sums>();
  for (const r of rows) {
    const sums = result.get(r.currency) ?? new Map();
    sums.set(key(r), { debits: Number(r.debits), credits: Number(r.credits) });
    result.set(r.currency, sums);
  }
  return result;
}

/** The balance sheet of one currency from every account's debits and credits before `at`. */
function balanceSheet(at: string, sums: Sums = new Map()): BalanceSheet {
  const sheet = {
    assets: { clearing_cents: 0, disputes_open_cents: 0, receivables_cents: 0, total_cents: 0 },
    liabilities: { payables_cents: 0, in_transit_cents: 0, withheld_cents: 0, suspense_cents: 0, total_cents: 0 },
    equity: { retained_earnings_cents: 0, total_cents: 0 },
  };
  for (const [account, { debits, credits }] of sums) {
    // A creator's payable below zero is a receivable (trialBalanceRow), shown as the asset.
    const row = trialBalanceRow(account, '', debits, credits);
    if (account === Accounts.clearing) sheet.assets.clearing_cents += row.balance_cents;
    else if (account === Accounts.disputes) sheet.assets.disputes_open_cents += row.balance_cents;
    else if (row.account.endsWith(':receivable')) sheet.assets.receivables_cents += row.balance_cents;
    else if (account.endsWith(':payable')) sheet.liabilities.payables_cents += row.balance_cents;
    else if (account.endsWith(':in_transit')) sheet.liabilities.in_transit_cents += row.balance_cents;
    else if (account.endsWith(':withheld')) sheet.liabilities.withheld_cents += row.balance_cents;
    else if (account === Accounts.suspense) sheet.liabilities.suspense_cents += row.balance_cents;
    // Revenue (credit-normal) and expenses (debit-normal) close into retained earnings.
    else sheet.equity.retained_earnings_cents += isDebitNormal(account) ? 0 - row.balance_cents : row.balance_cents;
  }
  const a = sheet.assets;
  const l = sheet.liabilities;
  a.total_cents = a.clearing_cents + a.disputes_open_cents + a.receivables_cents;
  l.total_cents = l.payables_cents + l.in_transit_cents + l.withheld_cents + l.suspense_cents;
  sheet.equity.total_cents = sheet.equity.retained_earnings_cents;
  return { at, ...sheet, balanced: a.total_cents === l.total_cents + sheet.equity.total_cents };
}
