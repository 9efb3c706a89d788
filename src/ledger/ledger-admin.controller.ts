import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../accounts/account-queries';
import { accountIdParam } from '../accounts/account-param';
import { modeParam } from '../platform/mode';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { cutoffParam } from '../platform/instant';
import { parseLimit } from '../platform/pagination';
import { recordReason } from '../platform/request-context';
import { PausePayoutsCommand, ResumePayoutsCommand } from './commands/pause-payouts';
import { RunPayoutsCommand } from './commands/run-payouts';
import { SetPayoutDestinationCommand } from './commands/set-payout-destination';
import { JournalAudit } from './journal-audit';
import { JournalQueries } from './journal-queries';
import { LedgerAudit } from './ledger-audit';
import { PausePayoutsDto, PayoutDestinationDto, PayoutsAccountDto, RunPayoutsDto } from './ledger-admin.dto';
import { LedgerQueries } from './ledger-queries';
import { LedgerReconciliation } from './reconciliation';

/** Operator API of the ledger (`svc payouts ...`, `svc ledger ...`), behind ADMIN_TOKEN. */
@Controller('admin')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class LedgerAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly queries: LedgerQueries,
    private readonly audit: LedgerAudit,
    private readonly journal: JournalQueries,
    private readonly reconciliation: LedgerReconciliation,
    private readonly journalAudit: JournalAudit,
  ) {}

  @Post('payouts/run')
  @HttpCode(200)
  run(@Body() body: RunPayoutsDto) {
    return this.commands.execute(new RunPayoutsCommand(body.mode, body.account));
  }

  @Post('payouts/pause')
  @HttpCode(200)
  pause(@Body() body: PausePayoutsDto) {
    recordReason(body.reason);
    return this.commands.execute(new PausePayoutsCommand(body.account, body.mode));
  }

  @Post('payouts/resume')
  @HttpCode(200)
  resume(@Body() body: PayoutsAccountDto) {
    return this.commands.execute(new ResumePayoutsCommand(body.account, body.mode));
  }

  @Post('payouts/destination')
  @HttpCode(200)
  destination(@Body() body: PayoutDestinationDto) {
    return this.commands.execute(new SetPayoutDestinationCommand(body.account, body.mode, body.stripe_account));
  }

  @Get('ledger/verify')
  async verify(@Query('account') account?: unknown, @Query('mode') mode?: unknown) {
    const accountId = account === undefined ? undefined : await accountIdParam(this.accounts, account);
    const filter = { accountId, mode: modeParam(mode, false) };
    const [ledger, journal] = await Promise.all([this.audit.verify(filter), this.journalAudit.verify({ mode: filter.mode })]);
    return { ...ledger, ok: ledger.ok && journal.ok, journal };
  }

  /** Every balance transaction of one ledger, oldest first. */
  @Get('ledger/export')
  async export(@Query('account') account?: unknown, @Query('mode') mode?: unknown) {
    return { items: await this.queries.all({ accountId: await accountIdParam(this.accounts, account), mode: modeParam(mode, true)! }) };
  }

  /** Every journal account's debits, credits and balance in one mode, now or as of an instant. */
  @Get('ledger/trial-balance')
  trialBalance(@Query('mode') mode?: unknown, @Query('as_of') asOf?: unknown) {
    return this.journal.trialBalance(modeParam(mode, true)!, cutoffParam('as_of', asOf));
  }

  /** The journal's postings in log order, recorded in [from, to), of one account when given, a page at a time. */
  @Get('ledger/journal')
  postings(
    @Query('mode') mode?: unknown,
    @Query('from') from?: unknown,
    @Query('to') to?: unknown,
    @Query('cursor') cursor?: unknown,
    @Query('limit') limit?: unknown,
    @Query('account') account?: unknown,
  ) {
    const range = rangeParams(from, to);
    if (cursor !== undefined && (typeof cursor !== 'string' || cursor.length > 200)) throw Errors.validationFailed('Invalid field "cursor": not a cursor this list returned.');
    if (account !== undefined && (typeof account !== 'string' || !account || account.length > 200)) throw Errors.validationFailed('Invalid field "account": must be an account of the journal, such as platform:fee_revenue.');
    return this.journal.postings(modeParam(mode, true)!, { ...range, account: account as string | undefined }, { cursor: cursor as string | undefined, limit: parseLimit(limit, { fallback: 1000, max: 5000 }) });
  }

  /** The journal's processor:clearing against the processor's own records for [from, to). */
  @Get('ledger/reconcile')
  reconcile(@Query('mode') mode?: unknown, @Query('from') from?: unknown, @Query('to') to?: unknown) {
    return this.reconciliation.reconcile(modeParam(mode, true)!, rangeParams(from, to));
  }
}

/** `from` and `to` query parameters: ISO 8601 instants, from not after to. */
function rangeParams(from: unknown, to: unknown): { from?: Date; to?: Date } {
  const range = { from: cutoffParam('from', from), to: cutoffParam('to', to) };
  if (range.from && range.to && range.from > range.to) throw Errors.validationFailed('Invalid field "from": must not be after "to".');
  return range;
}
