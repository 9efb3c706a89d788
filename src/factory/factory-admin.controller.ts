import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { AccountQueries } from '../accounts/account-queries';
import { accountIdParam } from '../accounts/account-param';
import { modeParam } from '../platform/mode';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { parseCursor, parseLimit } from '../platform/pagination';
import { JobQueries } from './job-queries';

/** Operator view of generation jobs (`svc factory jobs`), behind ADMIN_TOKEN. */
@Controller('admin/factory')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class FactoryAdminController {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly jobs: JobQueries,
  ) {}

  /** An account's jobs in one mode (default test), newest first, with its credits left in that mode. */
  @Get('jobs')
  async list(@Query('account') account?: unknown, @Query('mode') mode?: unknown, @Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    const accountId = await accountIdParam(this.accounts, account);
    const inMode = modeParam(mode ?? 'test', true)!;
    const owner = { accountId, mode: inMode };
    const page = await this.jobs.list(owner, parseLimit(limit, { fallback: 50, max: 200 }), parseCursor(cursor));
    return { account: accountId, mode: inMode, credits: await this.accounts.creditsLeft(owner), ...page };
  }
}
