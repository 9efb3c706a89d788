import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database, isTableNotServedYet } from '../database/database';
import type { Mode } from '../platform/mode';
import { inMode, Owner } from '../platform/owner-scope';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import { Accounts, BalanceActivity, balanceEffectsOfEach, isDebitNormal, Posting, trialBalanceRow } from './journal';
import { ACTOR_COLUMNS, PostingActor, toPostingActor, WITH_ACTORS } from './event-actors';
import { DEFAULT_CURRENCY } from './ledger.decider';

/** A clearing posting of the journal, as reconciliation reads it. */
export interface ClearingEntry {
  event_id: string;
  event_type: string;
  processor_ref: string | null;
  currency: string;
  /** What moved through our processor balance, positive. */
  amount_cents: number;
}

/** One account's postings on one UTC day (yyyy-mm-dd). */
export interface DailyTotal {
  day: string;
  account: string;
  currency: string;
  debits_cents: number;
  credits_cents: number;
}

/** One row of balance_days: a creator's balance activity on one UTC day (yyyy-mm-dd). */
type BalanceDay = { day: string; currency: string } & Record<keyof BalanceActivity, number | string>;

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const JOURNAL_READ_MODEL = 'journal';

/** GET /v1/balance: the creator's accounts of the journal, as they stood at `as_of`. */
export interface Balance {
  object: 'balance';
  currency: string;
  /** What the platform owes the creator now, never below 0. */
  available_cents: number;
  /** What the creator owes the platform (their payable below 0: a refund or lost dispute after a payout); later sales recover it first. */
  receivable_cents: number;
  in_transit_cents: number;
  withheld_cents: number;
  as_of: string;
}

export type Interval = 'day' | 'week' | 'month';

/** One interval of GET /v1/balance/history: what the creator's balance did in [start, end). */
export interface BalancePeriod {
  start: string;
  end: string;
  opening_balance_cents: number;
  /** By reporting category: sales at their amount, the platform's fees on them (negative, returned on a refund), refunds at their amount, payouts sent, disputes. */
  activity: BalanceActivity;
  closing_balance_cents: number;
}

/** The interval boundaries in UTC from `from` (truncated to its interval) until `to`; weeks start on Monday. */
export function periodsOf(from: Date, to: Date, interval: Interval): { start: Date; end: Date }[] {
  const start = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), interval === 'month' ? 1 : from.getUTCDate()));
  if (interval === 'week') start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7));
  const next = (d: Date) => {
    const n = new Date(d);
    if (interval === 'month') n.setUTCMonth(n.getUTCMonth() + 1);
    else n.setUTCDate(n.getUTCDate() + (interval === 'week' ? 7 : 1));
    return n;
  };
  const periods: { start: Date; end: Date }[] = [];
  for (let at = start; at < to; at = next(at)) periods.push({ start: at, end: next(at) });
  return periods;
}

/** The period holding `at`: periods are in order and adjoin. */
function periodIndex(periods: { start: Date }[], at: Date): number {
  let low = 0;
  let high = periods.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (periods[mid].start <= at) low = mid;
    else high = mid - 1;
  }
  return low;
}

export interface TrialBalanceAccount {
  account: string;
  currency: string;
  debits_cents: number;
  credits_cents: number;
  /** In the account's own sign: debits - credits for assets and expenses, credits - debits otherwise. */
  balance_cents: number;
}

export interface TrialBalance {
  mode: Mode;
  as_of: string;
  currency_totals: { currency: string; debits_cents: number; credits_cents: number }[];
  accounts: TrialBalanceAccount[];
  /** Debits equal credits in every currency, and (without `as_of`) every running total is the sum of its postings. */
  balanced: boolean;
  /** When not balanced: the events (up to 20) whose postings do not balance, which broke it. */
  unbalanced_events: { event_id: string; event_type: string; position: string; currency: string; debits_cents: number; credits_cents: number }[];
  /**
   * Without `as_of`: the accounts whose running totals (what the journal keeps as it posts)
   * differ from the sums of their postings; either was changed outside the journal.
   */
  totals_differ: { account: string; currency: string; postings_debits_cents: number; postings_credits_cents: number; running_debits_cents: number; running_credits_cents: number }[];
}

export const toPosting = (row: any): Posting => ({
  posting_id: row.posting_id,
  event_id: row.event_id,
  event_type: row.event_type,
  position: row.position,
  recorded_at: new Date(row.recorded_at).toISOString(),
  ...(row.occurred_at ? { occurred_at: new Date(row.occurred_at).toISOString() } : {}),
  ...(row.kind ? { kind: row.kind, reason: row.reason, actor: row.actor } : {}),
  mode: row.mode,
  currency: row.currency,
  account: row.account,
  debit_cents: Number(row.debit_cents),
  credit_cents: Number(row.credit_cents),
  reference: row.reference,
  processor_ref: row.processor_ref,
});

/** Reads of the journal read model (projections/journal.projection.ts); every read takes the mode. */
@Injectable()
export class JournalQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Each of the creator's accounts at `asOf` (now when absent): the balance after its last
   * posting recorded strictly before that instant (the books' one cut-off, `cutoffParam`), one index lookup per account whatever the
   * history's length. A creator's postings all come from their ledger stream, whose events
   * are recorded in order, so the last by time is the last by position.
   */
  async balance(owner: Owner, asOf?: Date): Promise<Balance> {
    const accounts = [Accounts.payable(owner.accountId), Accounts.inTransit(owner.accountId), Accounts.withheld(owner.accountId)];
    // The journal's accounts name the creator: the scope is the mode's.
    const s = inMode(owner.mode);
    const { rows } = asOf
      ? await this.db.query<{ account: string; currency: string; balance: string }>(
          `SELECT a.account, p.currency, p.balance_after_cents AS balance
             FROM unnest(${s.param(accounts)}::text[]) AS a(account)
             CROSS JOIN LATERAL (
               SELECT currency, balance_after_cents FROM journal_postings
                WHERE ${s.where()} AND account = a.account AND recorded_at < ${s.param(asOf.toISOString())}
                ORDER BY recorded_at DESC, position DESC LIMIT 1) p`,
          s.params,
        )
      : await this.db.query<{ account: string; currency: string; balance: string }>(
          `SELECT account, currency, debits_cents - credits_cents AS balance FROM journal_accounts WHERE ${s.where()} AND account = ANY(${s.param(accounts)}::text[])`,
          s.params,
        );
    // Liabilities to the creator: their balance is credits minus debits.
    const owed = (account: string) => 0 - rows.filter((r) => r.account === account).reduce((sum, r) => sum + Number(r.balance), 0);
    return {
      object: 'balance',
      currency: rows[0]?.currency ?? DEFAULT_CURRENCY,
      available_cents: Math.max(0, owed(accounts[0])),
      receivable_cents: Math.max(0, 0 - owed(accounts[0])),
      in_transit_cents: owed(accounts[1]),
      withheld_cents: owed(accounts[2]),
      as_of: (asOf ?? new Date()).toISOString(),
    };
  }

  /**
   * Every account's debits and credits, re-added from the postings (recorded strictly before
   * `asOf` when given), and the totals per currency. Without `asOf` the same statement reads
   * each account's running totals (journal_accounts) beside the sums, in one snapshot, and
   * names every account where they differ: the running totals are a cache of the postings,
   * and a report that only read them said balanced over a changed posting (issue 38, defect 4:
   * test/ledger/journal.e2e.spec.ts "re-adds the postings").
   */
  async trialBalance(mode: Mode, asOf?: Date): Promise<TrialBalance> {
    const s = inMode(mode);
    const { rows } = asOf
      ? await this.db.query(
          `SELECT account, currency, sum(debit_cents) AS debits_cents, sum(credit_cents) AS credits_cents
             FROM journal_postings WHERE ${s.where()} AND recorded_at < ${s.param(asOf.toISOString())} GROUP BY account, currency ORDER BY account, currency`,
          s.params,
        )
      : await this.db.query(
          `SELECT COALESCE(p.account, a.account) AS account, COALESCE(p.currency, a.currency) AS currency,
                  COALESCE(p.debits_cents, 0) AS debits_cents, COALESCE(p.credits_cents, 0) AS credits_cents,
                  a.debits_cents AS running_debits_cents, a.credits_cents AS running_credits_cents
             FROM (SELECT account, currency, sum(debit_cents) AS debits_cents, sum(credit_cents) AS credits_cents
                     FROM journal_postings WHERE ${s.where()} GROUP BY account, currency) p
             FULL JOIN (SELECT account, currency, debits_cents, credits_cents FROM journal_accounts WHERE ${s.where()}) a
               ON a.account = p.account AND a.currency = p.currency
            ORDER BY 1, 2`,
          s.params,
        );
    const accounts = rows.map((r): TrialBalanceAccount => {
      const debits = Number(r.debits_cents);
      const credits = Number(r.credits_cents);
      return trialBalanceRow(r.account, r.currency, debits, credits);
    });
    const totalsDiffer = asOf
      ? []
      : rows
          .map((r) => ({
            account: r.account as string,
            currency: r.currency as string,
            postings_debits_cents: Number(r.debits_cents),
            postings_credits_cents: Number(r.credits_cents),
            running_debits_cents: Number(r.running_debits_cents ?? 0),
            running_credits_cents: Number(r.running_credits_cents ?? 0),
          }))
          .filter((d) => d.postings_debits_cents !== d.running_debits_cents || d.postings_credits_cents !== d.running_credits_cents);
    const totals = new Map<string, { currency: string; debits_cents: number; credits_cents: number }>();
    for (const a of accounts) {
      const t = totals.get(a.currency) ?? { currency: a.currency, debits_cents: 0, credits_cents: 0 };
      t.debits_cents += a.debits_cents;
      t.credits_cents += a.credits_cents;
      totals.set(a.currency, t);
    }
    const currencyTotals = [...totals.values()];
    const sumsBalance = currencyTotals.every((t) => t.debits_cents === t.credits_cents);
    return {
      mode,
      as_of: (asOf ?? new Date()).toISOString(),
      currency_totals: currencyTotals,
      accounts,
      balanced: sumsBalance && totalsDiffer.length === 0,
      unbalanced_events: sumsBalance ? [] : await this.unbalancedEvents(mode, asOf),
      totals_differ: totalsDiffer,
    };
  }

  /** A scan of every posting: only run once the totals showed that something does not balance. */
  private async unbalancedEvents(mode: Mode, asOf?: Date): Promise<TrialBalance['unbalanced_events']> {
    const s = inMode(mode);
    const upTo = s.param(asOf?.toISOString() ?? null);
    const { rows } = await this.db.query(
      `SELECT event_id, min(event_type) AS event_type, min(position) AS position, currency,
              sum(debit_cents) AS debits_cents, sum(credit_cents) AS credits_cents
         FROM journal_postings WHERE ${s.where()} AND (${upTo}::timestamptz IS NULL OR recorded_at < ${upTo})
        GROUP BY event_id, currency HAVING sum(debit_cents) <> sum(credit_cents) ORDER BY min(position) LIMIT 20`,
      s.params,
    );
    return rows.map((r) => ({ ...r, debits_cents: Number(r.debits_cents), credits_cents: Number(r.credits_cents) })) as TrialBalance['unbalanced_events'];
  }

  /**
   * Postings in log order, recorded in [from, to), `limit` at a time after the posting named
   * by `cursor` (the last posting_id of the previous page); 400 for a cursor that names none.
   * With `account`, only that account's postings (the cursor is the same).
   */
  async postings(mode: Mode, range: { from?: Date; to?: Date; account?: string }, page: { cursor?: string; limit: number }): Promise<Page<Posting & PostingActor>> {
    const s = inMode(mode);
    const where = [s.where()];
    if (range.account) where.push(`account = ${s.param(range.account)}`);
    if (range.from) where.push(`recorded_at >= ${s.param(range.from.toISOString())}`);
    if (range.to) where.push(`recorded_at < ${s.param(range.to.toISOString())}`);
    if (page.cursor) {
      const c = inMode(mode);
      const { rows } = await this.db.query<{ position: string }>(`SELECT position FROM journal_postings WHERE ${c.where()} AND posting_id = ${c.param(page.cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      where.push(`(position, posting_id) > (${s.param(rows[0].position)}, ${s.param(page.cursor)})`);
    }
    const { rows } = await this.db.query(
      `SELECT journal_postings.*, ${ACTOR_COLUMNS} FROM journal_postings ${WITH_ACTORS} WHERE ${where.join(' AND ')} ORDER BY position, posting_id LIMIT ${s.param(page.limit + 1)}`,
      s.params,
    );
    return toPage(rows.map((r) => ({ ...r, id: r.posting_id })), page.limit, (r) => ({ ...toPosting(r), ...toPostingActor(r) }));
  }

  /**
   * The debits and credits of each of `accounts` per UTC day of [from, to) (UTC midnights),
   * for the days that have any: the journal keeps them per day (journal_days), so a chart of
   * 30 days reads at most 30 rows an account however busy the days were.
   */
  async dailyTotals(mode: Mode, accounts: string[], range: { from: Date; to: Date }): Promise<DailyTotal[]> {
    const s = inMode(mode);
    const day = (at: Date) => at.toISOString().slice(0, 10);
    type Row = { day: string; account: string; currency: string; debits_cents: string; credits_cents: string };
    const { rows } = await this.db
      .query<Row>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, account, currency, debits_cents, credits_cents
           FROM journal_days
          WHERE ${s.where()} AND account = ANY(${s.param(accounts)}::text[]) AND day >= ${s.param(day(range.from))}::date AND day < ${s.param(day(range.to))}::date
          ORDER BY day, account, currency`,
        s.params,
      )
      .catch((error) => {
        // Journal version 1 still serves: sum its postings.
        if (!isTableNotServedYet(error)) throw error;
        const v1 = inMode(mode);
        return this.db.query<Row>(
          `SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, account, currency, sum(debit_cents) AS debits_cents, sum(credit_cents) AS credits_cents
             FROM journal_postings
            WHERE ${v1.where()} AND account = ANY(${v1.param(accounts)}::text[]) AND recorded_at >= ${v1.param(range.from.toISOString())} AND recorded_at < ${v1.param(range.to.toISOString())}
            GROUP BY 1, account, currency ORDER BY 1, account, currency`,
          v1.params,
        );
      });
    return rows.map((r) => ({ day: r.day, account: r.account, currency: r.currency, debits_cents: Number(r.debits_cents), credits_cents: Number(r.credits_cents) }));
  }

  /** Every posting about one purchase, payout or session (its reference) in the mode, in log order: the console follows a purchase to them. */
  async postingsOf(mode: Mode, reference: string, limit = 200): Promise<(Posting & PostingActor)[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query(
      `SELECT journal_postings.*, ${ACTOR_COLUMNS} FROM journal_postings ${WITH_ACTORS} WHERE ${s.where()} AND reference = ${s.param(reference)} ORDER BY position, posting_id LIMIT ${s.param(limit)}`,
      s.params,
    );
    return rows.map((r) => ({ ...toPosting(r), ...toPostingActor(r) }));
  }

  /** The postings of processor:clearing recorded in [from, to): what moved through our processor balance. */
  async clearingEntries(mode: Mode, range: { from?: Date; to?: Date }): Promise<ClearingEntry[]> {
    const s = inMode(mode);
    const from = s.param(range.from?.toISOString() ?? null);
    const to = s.param(range.to?.toISOString() ?? null);
    const { rows } = await this.db.query(
      `SELECT event_id, event_type, processor_ref, currency, debit_cents + credit_cents AS amount_cents FROM journal_postings
        WHERE ${s.where()} AND account = ${s.param(Accounts.clearing)} AND (${from}::timestamptz IS NULL OR recorded_at >= ${from}) AND (${to}::timestamptz IS NULL OR recorded_at < ${to})
        ORDER BY position, posting_id`,
      s.params,
    );
    return rows.map((r) => ({ event_id: r.event_id, event_type: r.event_type, processor_ref: r.processor_ref, currency: r.currency, amount_cents: Number(r.amount_cents) }));
  }

  /**
   * The creator's balance (payable and in transit: what the balance transactions add up to)
   * interval by interval: the opening of the first read as of its start, then each interval's
   * activity from the days the journal keeps (balance_days: the postings of the creator's own
   * events, by category); closing = opening + activity, and one interval's closing is the next
   * one's opening.
   */
  async history(owner: Owner, periods: { start: Date; end: Date }[]): Promise<{ currency: string; items: BalancePeriod[] }> {
    if (!periods.length) return { currency: DEFAULT_CURRENCY, items: [] };
    const accounts = [Accounts.payable(owner.accountId), Accounts.inTransit(owner.accountId)];
    const first = periods[0].start;
    const last = periods[periods.length - 1].end;
    // The journal's accounts name the creator: the scope is the mode's.
    const o = inMode(owner.mode);
    const { rows: opening } = await this.db.query<{ balance: string; currency: string | null }>(
      `SELECT COALESCE(sum(p.balance_after_cents), 0) AS balance, min(p.currency) AS currency FROM unnest(${o.param(accounts)}::text[]) AS a(account)
         CROSS JOIN LATERAL (SELECT balance_after_cents, currency FROM journal_postings
                              WHERE ${o.where()} AND account = a.account AND recorded_at < ${o.param(first.toISOString())} ORDER BY recorded_at DESC, position DESC LIMIT 1) p`,
      o.params,
    );
    // What the creator's balance did each day of the range, kept by the journal (balance_days).
    const s = inMode(owner.mode);
    const rows = await this.db
      .query<BalanceDay>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, currency, sales_cents, fees_cents, refunds_cents, payouts_cents, disputes_cents, adjustments_cents FROM balance_days
          WHERE ${s.where()} AND account_id = ${s.param(owner.accountId)} AND day >= ${s.param(first.toISOString().slice(0, 10))}::date AND day < ${s.param(last.toISOString().slice(0, 10))}::date
          ORDER BY day`,
        s.params,
      )
      .then((r) => r.rows)
      .catch((error) => {
        if (!isTableNotServedYet(error)) throw error;
        return this.balanceDaysFromPostings(owner, accounts, first, last);
      });
    const activities: BalanceActivity[] = periods.map(() => ({ sales_cents: 0, fees_cents: 0, refunds_cents: 0, payouts_cents: 0, disputes_cents: 0, adjustments_cents: 0 }));
    for (const row of rows) {
      const activity = activities[periodIndex(periods, new Date(`${row.day}T00:00:00Z`))];
      for (const key of Object.keys(activity) as (keyof BalanceActivity)[]) activity[key] += Number(row[key]);
    }
    let balance = 0 - Number(opening[0].balance);
    const items = periods.map(({ start, end }, i) => {
      const activity = activities[i];
      const openingBalance = balance;
      balance = openingBalance + activity.sales_cents + activity.fees_cents + activity.refunds_cents + activity.payouts_cents + activity.disputes_cents + activity.adjustments_cents;
      return { start: start.toISOString(), end: end.toISOString(), opening_balance_cents: openingBalance, activity, closing_balance_cents: balance };
    });
    return { currency: opening[0].currency ?? rows[0]?.currency ?? DEFAULT_CURRENCY, items };
  }

  /**
   * balance_days, computed from the postings, while journal version 1 (which has no such
   * table) still serves: every posting of the creator's events in [first, last), by day.
   */
  private async balanceDaysFromPostings(owner: Owner, accounts: string[], first: Date, last: Date): Promise<BalanceDay[]> {
    const s = inMode(owner.mode);
    const { rows } = await this.db.query(
      `SELECT * FROM journal_postings
        WHERE ${s.where()} AND event_id IN (SELECT event_id FROM journal_postings
                                          WHERE ${s.where()} AND account = ANY(${s.param(accounts)}::text[]) AND recorded_at >= ${s.param(first.toISOString())} AND recorded_at < ${s.param(last.toISOString())})
        ORDER BY position, posting_id`,
      s.params,
    );
    const days = new Map<string, { day: string; currency: string } & BalanceActivity>();
    for (const { posting, accountId, activity } of balanceEffectsOfEach(rows.map(toPosting))) {
      if (accountId !== owner.accountId) continue;
      const day = posting.recorded_at.slice(0, 10);
      const sums = days.get(day) ?? { day, currency: posting.currency, sales_cents: 0, fees_cents: 0, refunds_cents: 0, payouts_cents: 0, disputes_cents: 0, adjustments_cents: 0 };
      for (const key of Object.keys(activity) as (keyof BalanceActivity)[]) sums[key] += activity[key];
      days.set(day, sums);
    }
    return [...days.values()];
  }
}
