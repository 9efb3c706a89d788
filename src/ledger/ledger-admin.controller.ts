import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../accounts/account-queries';
import { accountIdParam, modeParam } from '../admin/admin-params';
import { AdminGuard } from '../admin/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { PausePayoutsCommand, ResumePayoutsCommand } from './commands/pause-payouts';
import { RunPayoutsCommand } from './commands/run-payouts';
import { SetPayoutDestinationCommand } from './commands/set-payout-destination';
import { LedgerAudit } from './ledger-audit';
import { PayoutDestinationDto, PayoutsAccountDto, RunPayoutsDto } from './ledger-admin.dto';
import { LedgerQueries } from './ledger-queries';

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
  ) {}

  @Post('payouts/run')
  @HttpCode(200)
  run(@Body() body: RunPayoutsDto) {
    return this.commands.execute(new RunPayoutsCommand(body.mode, body.account));
  }

  @Post('payouts/pause')
  @HttpCode(200)
  pause(@Body() body: PayoutsAccountDto) {
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
    return this.audit.verify({ accountId, mode: modeParam(mode, false) });
  }

  /** Every balance transaction of one ledger, oldest first. */
  @Get('ledger/export')
  async export(@Query('account') account?: unknown, @Query('mode') mode?: unknown) {
    return { items: await this.queries.all(await accountIdParam(this.accounts, account), modeParam(mode, true)!) };
  }
}
