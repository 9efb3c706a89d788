import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { EndpointOwner, EndpointStreams } from '../endpoint-streams';
import { WebhookEndpointDeleted, WebhookEvents } from '../events';

export class DeleteWebhookEndpointCommand extends Command<{ id: string; deleted: true }> {
  constructor(
    readonly owner: EndpointOwner,
    readonly endpointId: string,
  ) {
    super();
  }
}

/** A deleted endpoint reads as 404; its queued deliveries are never sent (the worker joins on live endpoints). */
@CommandHandler(DeleteWebhookEndpointCommand)
export class DeleteWebhookEndpointHandler implements ICommandHandler<DeleteWebhookEndpointCommand> {
  constructor(
    private readonly endpoints: EndpointStreams,
    private readonly writer: EventWriter,
  ) {}

  async execute({ owner, endpointId }: DeleteWebhookEndpointCommand): Promise<{ id: string; deleted: true }> {
    await this.writer.retryOnConflict(async () => {
      const { revision } = await this.endpoints.loadOwn(owner, endpointId);
      const deleted: WebhookEndpointDeleted = {
        endpoint_id: endpointId,
        account_id: owner.accountId,
        mode: owner.mode,
        deleted_at: new Date().toISOString(),
      };
      await this.writer.append(Streams.webhookEndpoint(owner.mode, endpointId), [{ type: WebhookEvents.WebhookEndpointDeleted, data: { ...deleted } }], revision);
    });
    return { id: endpointId, deleted: true };
  }
}
