import { BeforeApplicationShutdown, Inject, Module, OnApplicationBootstrap } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { SETTINGS, Settings } from '../config/settings';
import { CreateWebhookEndpointHandler, SECRET_BOX } from './commands/create-endpoint';
import { DeleteWebhookEndpointHandler } from './commands/delete-endpoint';
import { RetryWebhookDeliveryHandler } from './commands/retry-delivery';
import { RotateWebhookSecretHandler } from './commands/rotate-secret';
import { SendTestWebhookHandler } from './commands/send-test-event';
import { UpdateWebhookEndpointHandler } from './commands/update-endpoint';
import { DeliveryLog } from './delivery-log';
import { DeliveryWorker } from './delivery-worker';
import { EndpointQueries } from './endpoint-queries';
import { EndpointStreams } from './endpoint-streams';
import { EventQueries } from './event-queries';
import { EventsController } from './events.controller';
import { WebhookFanOut } from './fan-out';
import { resolveWebhookKey, SecretBox } from '../platform/secret-box';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhooksAdminController } from './webhooks-admin.controller';

/**
 * Webhook endpoints, the fan-out subscriber and the delivery worker. The subscriber and
 * worker run with the workers (settings.workers), start once the read models are prepared
 * and stop before the database closes.
 */
@Module({
  imports: [AccountsModule],
  controllers: [WebhookEndpointsController, WebhooksAdminController, EventsController],
  providers: [
    { provide: SECRET_BOX, inject: [SETTINGS], useFactory: (settings: Settings) => new SecretBox(resolveWebhookKey(settings)) },
    EndpointQueries,
    EventQueries,
    EndpointStreams,
    DeliveryLog,
    CreateWebhookEndpointHandler,
    UpdateWebhookEndpointHandler,
    DeleteWebhookEndpointHandler,
    RotateWebhookSecretHandler,
    SendTestWebhookHandler,
    RetryWebhookDeliveryHandler,
    WebhookFanOut,
    DeliveryWorker,
  ],
  // The console's pages read the same queries as the API.
  exports: [EndpointQueries, EventQueries, DeliveryLog],
})
export class WebhooksModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly fanOut: WebhookFanOut,
    private readonly worker: DeliveryWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.workers) return;
    this.fanOut.start();
    this.worker.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.stop();
    await this.fanOut.stop();
  }
}
