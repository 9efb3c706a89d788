import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { QueryParameters } from '../platform/known-parameters';
import { parseCursor, parseLimit } from '../platform/pagination';
import { CreateWebhookEndpointCommand } from './commands/create-endpoint';
import { DeleteWebhookEndpointCommand } from './commands/delete-endpoint';
import { RetryWebhookDeliveryCommand } from './commands/retry-delivery';
import { DEFAULT_PREVIOUS_SECRET_SECONDS, RotateWebhookSecretCommand } from './commands/rotate-secret';
import { SendTestWebhookCommand } from './commands/send-test-event';
import { UpdateWebhookEndpointCommand } from './commands/update-endpoint';
import { DeliveryLog } from './delivery-log';
import { CreateWebhookEndpointDto, RotateWebhookSecretDto, UpdateWebhookEndpointDto } from './dto';
import { EndpointQueries } from './endpoint-queries';

const PAGE = { fallback: 20, max: 100 };

/** Webhook endpoints of the caller's account in the key's mode (spec part 4). */
@Controller('v1')
@RequireScope('webhooks:write')
export class WebhookEndpointsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly endpoints: EndpointQueries,
    private readonly log: DeliveryLog,
  ) {}

  @Post('webhook_endpoints')
  create(@Auth() auth: AuthContext, @Body() body: CreateWebhookEndpointDto) {
    return this.commands.execute(new CreateWebhookEndpointCommand(auth.accountId, auth.mode, body.url, body.events, body.description ?? ''));
  }

  @Get('webhook_endpoints')
  list(@Auth() auth: AuthContext, @Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    return this.endpoints.list(auth, parseLimit(limit, PAGE), parseCursor(cursor));
  }

  @Get('webhook_endpoints/:id')
  async get(@Auth() auth: AuthContext, @Param('id') id: string) {
    const endpoint = await this.endpoints.find(auth, id);
    if (!endpoint) throw Errors.notFound('webhook endpoint');
    return endpoint;
  }

  @Patch('webhook_endpoints/:id')
  update(@Auth() auth: AuthContext, @Param('id') id: string, @Body() body: UpdateWebhookEndpointDto) {
    return this.commands.execute(new UpdateWebhookEndpointCommand(auth, id, body));
  }

  @Delete('webhook_endpoints/:id')
  delete(@Auth() auth: AuthContext, @Param('id') id: string) {
    return this.commands.execute(new DeleteWebhookEndpointCommand(auth, id));
  }

  /** A new secret, shown once; the old one signs beside it for expires_in seconds. */
  @Post('webhook_endpoints/:id/rotate_secret')
  @HttpCode(200)
  rotateSecret(@Auth() auth: AuthContext, @Param('id') id: string, @Body() body: RotateWebhookSecretDto = {}) {
    return this.commands.execute(new RotateWebhookSecretCommand(auth, id, body.expires_in ?? DEFAULT_PREVIOUS_SECRET_SECONDS));
  }

  /** 202: queued, like any event; its delivery shows in the log under the id answered. */
  @Post('webhook_endpoints/:id/test')
  @HttpCode(202)
  sendTest(@Auth() auth: AuthContext, @Param('id') id: string) {
    return this.commands.execute(new SendTestWebhookCommand(auth, id));
  }

  @Post('webhook_endpoints/:id/deliveries/:delivery_id/retry')
  @HttpCode(200)
  retryDelivery(@Auth() auth: AuthContext, @Param('id') id: string, @Param('delivery_id') deliveryId: string) {
    return this.commands.execute(new RetryWebhookDeliveryCommand(deliveryId, { owner: auth, endpointId: id }));
  }

  /** The delivery log: one entry per event sent to this endpoint, newest first. */
  @Get('webhook_endpoints/:id/events')
  @QueryParameters('limit', 'cursor', ...CREATED_PARAMETERS)
  async deliveries(@Auth() auth: AuthContext, @Param('id') id: string, @Query() query: Record<string, unknown>) {
    const limit = parseLimit(query.limit, PAGE);
    const cursor = parseCursor(query.cursor);
    const created = createdRange(query);
    if (!(await this.endpoints.find(auth, id))) throw Errors.notFound('webhook endpoint');
    return this.log.list(id, limit, cursor, created);
  }
}
