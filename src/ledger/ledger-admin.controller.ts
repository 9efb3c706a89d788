import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../accounts/account-queries';
import { AdminGuard } from '../admin/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { isMode, Mode } from '../platform/mode';
import { PausePayoutsCommand, ResumePayoutsCommand } from './commands/pause-payouts';
import { RunPayoutsCommand } from './commands/run-payouts';
import { SetPayoutDestinationCommand } from './commands/set-payout-destination';
import { LedgerAudit } from './ledger-audit';
import { PayoutDestinationDto, PayoutsAccountDto, RunPayoutsDto } from './ledger-admin.dto';
import { LedgerQueries } from './ledger-queries';

function modeParam(raw: unknown, required: boolean): Mode | undefined {
  if (raw === undefined && !required) return undefined;
  if (!isMode(raw)) throw Errors.validationFailed('Invalid field "mode": must be one of test, live.');
  return raw;
}

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
    const accountId = account === undefined ? undefined : await this.accountId(account);
    return this.audit.verify({ accountId, mode: modeParam(mode, false) });
  }

  /** Every balance transaction of one ledger, oldest first. */
  @Get('ledger/export')
  async export(@Query('account') account?: unknown, @Query('mode') mode?: unknown) {
    if (account === undefined) throw Errors.validationFailed('Invalid field "account": required.');
    return { items: await this.queries.all(await this.accountId(account), modeParam(mode, true)!) };
  }

  private async accountId(ref: unknown): Promise<string> {
    if (typeof ref !== 'string') throw Errors.validationFailed('Invalid field "account": give one account id or slug.');
    const found = await this.accounts.findAccount(ref);
    if (!found) throw Errors.notFound('account');
    return found.id;
  }
}
