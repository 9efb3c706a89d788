import { Body, Controller, Delete, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsArray, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { AccountStreams } from '../accounts/account-streams';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { MODES, Mode } from '../platform/mode';
import { CreateWebhookEndpointCommand } from './commands/create-endpoint';
import { DeleteWebhookEndpointCommand } from './commands/delete-endpoint';
import { RetryWebhookDeliveryCommand } from './commands/retry-delivery';
import { DEFAULT_PREVIOUS_SECRET_SECONDS, RotateWebhookSecretCommand } from './commands/rotate-secret';
import { RotateWebhookSecretDto } from './dto';
import { EndpointStreams } from './endpoint-streams';
import { PUBLIC_EVENT_TYPES } from './public-events';

export class AdminCreateEndpointDto {
  @IsString()
  @Length(1, 100)
  account: string;

  @IsIn(MODES)
  mode: Mode;

  @IsString()
  @Length(1, 2048)
  url: string;

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  events?: string[];

  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;
}

/**
 * Operator endpoints for `svc webhooks listen`, `rotate` and `resend`: any account's
 * endpoints and deliveries, with the admin token, under the same rules as the public API.
 */
@Controller('admin')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class WebhooksAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly accounts: AccountStreams,
    private readonly endpoints: EndpointStreams,
  ) {}

  /** No events listed: every event type. */
  @Post('webhook_endpoints')
  async create(@Body() body: AdminCreateEndpointDto) {
    const account = await this.accounts.get(body.account);
    return this.commands.execute(
      new CreateWebhookEndpointCommand(account.id, body.mode, body.url, body.events ?? [...PUBLIC_EVENT_TYPES], body.description ?? ''),
    );
  }

  @Delete('webhook_endpoints/:id')
  async delete(@Param('id') id: string) {
    return this.commands.execute(new DeleteWebhookEndpointCommand(await this.ownerOf(id), id));
  }

  @Post('webhook_endpoints/:id/rotate_secret')
  @HttpCode(200)
  async rotateSecret(@Param('id') id: string, @Body() body: RotateWebhookSecretDto = {}) {
    return this.commands.execute(new RotateWebhookSecretCommand(await this.ownerOf(id), id, body.expires_in ?? DEFAULT_PREVIOUS_SECRET_SECONDS));
  }

  /** By the delivery's id alone: the operator need not know its endpoint. */
  @Post('webhook_deliveries/:id/retry')
  @HttpCode(200)
  retryDelivery(@Param('id') id: string) {
    return this.commands.execute(new RetryWebhookDeliveryCommand(id));
  }

  private async ownerOf(endpointId: string) {
    const owner = await this.endpoints.owner(endpointId);
    if (!owner) throw Errors.notFound('webhook endpoint');
    return owner;
  }
}
