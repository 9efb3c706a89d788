import { Controller, Get, Query } from '@nestjs/common';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { parseCursor, parseLimit } from '../platform/pagination';
import { instantParam } from '../platform/instant';
import { JournalQueries } from './journal-queries';
import type { TransactionType } from './ledger.decider';
import { LedgerQueries } from './ledger-queries';

const TYPES: readonly TransactionType[] = ['sale', 'refund', 'payout'];
const PAGE = { fallback: 50, max: 200 };

/** The creator's ledger in the caller's mode (spec part 4 "Payouts and balance", decisions section 4). */
@Controller('v1')
@RequireScope('payouts:read')
export class BalanceController {
  constructor(
    private readonly ledger: LedgerQueries,
    private readonly journal: JournalQueries,
  ) {}

  /** The creator's balance from the journal: now, or as the books stood at `as_of` (events recorded at or before it). */
  @Get('balance')
  balance(@Auth() auth: AuthContext, @Query('as_of') asOf?: unknown) {
    return this.journal.balance(auth.accountId, auth.mode, instantParam('as_of', asOf));
  }

  @Get('balance_transactions')
  async balanceTransactions(
    @Auth() auth: AuthContext,
    @Query('type') type?: unknown,
    @Query('limit') limit?: unknown,
    @Query('cursor') cursor?: unknown,
  ) {
    if (type !== undefined && !TYPES.includes(type as TransactionType)) {
      throw Errors.validationFailed(`Invalid field "type": must be one of ${TYPES.join(', ')}.`);
    }
    const options = { type: type as TransactionType | undefined, limit: parseLimit(limit, PAGE), cursor: parseCursor(cursor) };
    return this.ledger.snapshot(async (q) => {
      const page = await this.ledger.transactions(auth.accountId, auth.mode, options, q);
      const { summary, payouts_paused } = await this.ledger.account(auth.accountId, auth.mode, q);
      return { items: page.items, summary, payouts_paused, next_cursor: page.next_cursor, has_more: page.has_more };
    });
  }

  @Get('payouts')
  async payouts(@Auth() auth: AuthContext, @Query('limit') limit?: unknown, @Query('cursor') cursor?: unknown) {
    const options = { limit: parseLimit(limit, PAGE), cursor: parseCursor(cursor) };
    return this.ledger.snapshot(async (q) => {
      const page = await this.ledger.payouts(auth.accountId, auth.mode, options, q);
      const { summary, payouts_paused } = await this.ledger.account(auth.accountId, auth.mode, q);
      return {
        ...page,
        // What the platform owes the creator now; a negative balance (refunds after a payout) owes nothing.
        amount_owed_cents: Math.max(0, summary.balance_cents),
        currency: summary.currency,
        payouts_paused,
      };
    });
  }
}
