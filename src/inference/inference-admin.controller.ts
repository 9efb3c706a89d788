import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../accounts/account-queries';
import { accountIdParam } from '../accounts/account-param';
import { modeParam } from '../platform/mode';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { SetInferencePriceCommand } from './commands/set-price';
import { modelNotFound } from './chat-request';
import { SetPriceDto } from './inference-admin.dto';
import { findModel } from './model-catalog';
import { UsageAudit } from './usage-audit';
import { parseDays } from './usage.controller';
import { UsageQueries } from './usage-queries';

/** Operator API of inference (`svc inference price`, `svc usage`), behind ADMIN_TOKEN. */
@Controller('admin')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class InferenceAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly usage: UsageQueries,
    private readonly audit: UsageAudit,
  ) {}

  @Post('inference/prices')
  @HttpCode(200)
  setPrice(@Body() body: SetPriceDto) {
    const model = findModel(body.model);
    if (!model) throw modelNotFound(body.model);
    return this.commands.execute(
      new SetInferencePriceCommand(model, { input_usd_per_million: body.input_usd_per_million, output_usd_per_million: body.output_usd_per_million }),
    );
  }

  /** What GET /v1/usage shows that account in that mode. */
  @Get('usage')
  async report(@Query('account') account?: unknown, @Query('mode') mode?: unknown, @Query('days') days?: unknown) {
    return this.usage.report({ accountId: await accountIdParam(this.accounts, account), mode: modeParam(mode, true)! }, parseDays(days));
  }

  @Get('usage/verify')
  async verify(@Query('account') account?: unknown, @Query('mode') mode?: unknown) {
    const accountId = account === undefined ? undefined : await accountIdParam(this.accounts, account);
    return this.audit.verify({ accountId, mode: modeParam(mode, false) });
  }
}
