import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../accounts/account-queries';
import { CreateAccountCommand } from '../accounts/commands/create-account';
import { CreateApiKeyCommand } from '../accounts/commands/create-api-key';
import { GrantCreditsCommand } from '../factory/commands/grant-credits';
import { RevokeApiKeyCommand } from '../accounts/commands/revoke-api-key';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { ApiError, Errors } from '../platform/errors';
import { ProjectionRunner, UnknownProjectionError } from '../projection-runner/projection-runner';
import { SETTINGS, Settings } from '../config/settings';
import { AdminGuard } from '../platform/auth/admin.guard';
import { CreateAccountDto, CreateKeyDto, GrantCreditsDto } from './admin.dto';
import { OpenKeyActivationCommand } from '../accounts/commands/open-key-activation';

/** A rebuild answers this long before the connection would count as idle. */
const ANSWER_MARGIN_MS = 2000;

/** The operator API behind ADMIN_TOKEN; the `svc` CLI is its client. */
@Controller('admin')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class AdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountQueries,
    private readonly projections: ProjectionRunner,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Post('accounts')
  createAccount(@Body() body: CreateAccountDto) {
    return this.commands.execute(new CreateAccountCommand(body.name, body.email, body.slug));
  }

  @Get('accounts/:idOrSlug')
  async account(@Param('idOrSlug') idOrSlug: string) {
    const account = await this.accounts.findAccount(idOrSlug);
    if (!account) throw Errors.notFound('account');
    return account;
  }

  @Post('keys')
  createKey(@Body() body: CreateKeyDto) {
    return this.commands.execute(
      new CreateApiKeyCommand(
        body.account,
        body.mode,
        body.tier ?? 'free',
        body.scopes ?? [],
        body.name ?? '',
        body.expires_at ? new Date(body.expires_at) : null,
      ),
    );
  }

  @Get('keys')
  async listKeys(@Query('account') accountRef?: string) {
    if (!accountRef) throw Errors.validationFailed('Invalid field "account": required.');
    const account = await this.accounts.findAccount(accountRef);
    if (!account) throw Errors.notFound('account');
    return { items: await this.accounts.listKeys(account.id) };
  }

  /** A fresh activation checkout for an inactive live premium key whose last one lapsed. */
  @Post('keys/:id/activation')
  @HttpCode(200)
  openActivation(@Param('id') id: string) {
    return this.commands.execute(new OpenKeyActivationCommand(id));
  }

  @Post('keys/:id/revoke')
  @HttpCode(200)
  revokeKey(@Param('id') id: string) {
    return this.commands.execute(new RevokeApiKeyCommand(id));
  }

  @Post('credits')
  @HttpCode(200)
  grantCredits(@Body() body: GrantCreditsDto) {
    return this.commands.execute(new GrantCreditsCommand(body.account, body.mode, body.amount));
  }

  @Get('projections')
  projectionStatus() {
    return this.projections.status();
  }

  @Get('projections/parked')
  async parked() {
    return { items: await this.projections.parked() };
  }

  /**
   * Rebuilds one read model beside the live one, or all of them when name is "all". Answers
   * once they serve, or before the connection would count as idle (HTTP_IDLE_TIMEOUT_MS):
   * those still catching up then show as `rebuilding`, and `svc projections rebuild` watches
   * GET /admin/projections until they serve.
   */
  @Post('projections/:name/rebuild')
  @HttpCode(200)
  async rebuild(@Param('name') name: string) {
    const names = name === 'all' ? this.projections.names() : [name];
    const { idleTimeoutMs, requestTimeoutMs } = this.settings.http;
    const timeoutMs = Math.max(0, Math.min(idleTimeoutMs, requestTimeoutMs) - ANSWER_MARGIN_MS);
    return { items: await this.unknownAsNotFound(() => this.projections.rebuild(names, { timeoutMs })) };
  }

  @Post('projections/:name/retry-parked')
  @HttpCode(200)
  retryParked(@Param('name') name: string) {
    return this.unknownAsNotFound(() => this.projections.retryParked(name));
  }

  private async unknownAsNotFound<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof UnknownProjectionError) throw new ApiError(404, 'not_found', error.message);
      throw error;
    }
  }
}
