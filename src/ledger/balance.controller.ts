import { Controller, Get, Query } from '@nestjs/common';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { parseCursor, parseLimit } from '../platform/pagination';
import { cutoffParam, instantParam } from '../platform/instant';
import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { QueryParameters } from '../platform/known-parameters';
import { Interval, JournalQueries, periodsOf } from './journal-queries';
import { TRANSACTION_TYPES as TYPES, TransactionType } from './ledger.decider';
import { LedgerQueries } from './ledger-queries';

const PAGE = { fallback: 50, max: 200 };
const INTERVALS: readonly Interval[] = ['day', 'week', 'month'];
/** A year of days: a longer history is asked for by week or month. */
const MAX_PERIODS = 366;

/** The creator's ledger in the caller's mode (spec part 4 "Payouts and balance", decisions section 4). */
@Controller('v1')
@RequireScope('payouts:read')
export class BalanceController {
  constructor(
    private readonly ledger: LedgerQueries,
    private readonly journal: JournalQueries,
  ) {}

  /** The creator's balance from the journal: now, or as the books stood at `as_of` (events recorded strictly before it). */
  @Get('balance')
  async balance(@Auth() auth: AuthContext, @Query('as_of') asOf?: unknown) {
    const at = cutoffParam('as_of', asOf);
    const balance = await this.journal.balance(auth, at);
    // Payouts' pause is today's state: an answer as of an earlier instant (which never changes) does not carry it.
    if (at) return balance;
    const pause = await this.ledger.pause(auth);
    return { ...balance, payouts_paused: pause !== null, payouts_pause: pause };
  }

  /** GET /v1/balance/history?from=&to=&interval=day|week|month: the balance interval by interval, from the journal. */
  @Get('balance/history')
  async history(@Auth() auth: AuthContext, @Query('from') from?: unknown, @Query('to') to?: unknown, @Query('interval') interval?: unknown) {
    if (interval !== undefined && !INTERVALS.includes(interval as Interval)) {
      throw Errors.validationFailed(`Invalid field "interval": must be one of ${INTERVALS.join(', ')}.`);
    }
    const every = (interval ?? 'day') as Interval;
    const end = cutoffParam('to', to) ?? new Date();
    const start = cutoffParam('from', from) ?? new Date(end.getTime() - 30 * 24 * 3600_000);
    if (start > end) throw Errors.validationFailed('Invalid field "from": must not be after "to".');
    const periods = periodsOf(start, end, every);
    if (periods.length > MAX_PERIODS) {
      throw Errors.validationFailed(`Invalid field "from": ${periods.length} ${every}s from "from" to "to"; ask for at most ${MAX_PERIODS}, or a longer interval.`);
    }
    return { object: 'balance_history', interval: every, ...(await this.journal.history(auth, periods)) };
  }

  @Get('balance_transactions')
  @QueryParameters('type', 'payout', 'limit', 'cursor', ...CREATED_PARAMETERS)
  async balanceTransactions(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const { type, payout } = query;
    if (type !== undefined && !TYPES.includes(type as TransactionType)) {
      throw Errors.validationFailed(`Invalid field "type": must be one of ${TYPES.join(', ')}.`);
    }
    if (payout !== undefined && (typeof payout !== 'string' || !/^po_[A-Za-z0-9]{1,64}$/.test(payout))) {
      throw Errors.validationFailed('Invalid field "payout": must be a payout id (po_...).');
    }
    const options = {
      type: type as TransactionType | undefined,
      limit: parseLimit(query.limit, PAGE),
      cursor: parseCursor(query.cursor),
      created: createdRange(query),
      payoutId: payout as string | undefined,
    };
    return this.ledger.snapshot(async (q) => {
      const { summary, payouts_paused, payouts_pause } = await this.ledger.account(auth, q);
      const page = await this.ledger.transactions(auth, options, summary.balance_cents, q);
      return { items: page.items, summary, payouts_paused, payouts_pause, next_cursor: page.next_cursor, has_more: page.has_more };
    });
  }

  @Get('payouts')
  @QueryParameters('limit', 'cursor', ...CREATED_PARAMETERS)
  async payouts(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const options = { limit: parseLimit(query.limit, PAGE), cursor: parseCursor(query.cursor), created: createdRange(query) };
    return this.ledger.snapshot(async (q) => {
      const page = await this.ledger.payouts(auth, options, q);
      const { summary, payouts_paused, payouts_pause } = await this.ledger.account(auth, q);
      return {
        ...page,
        // What the platform owes the creator now; a negative balance (refunds after a payout) owes nothing.
        amount_owed_cents: Math.max(0, summary.balance_cents),
        currency: summary.currency,
        payouts_paused,
        // Why, and since when (issue 38, defect 1): a refused destination's pause lifts when it changes.
        payouts_pause,
      };
    });
  }
}
