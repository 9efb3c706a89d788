import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EndpointStreams } from '../endpoint-streams';
import type { EndpointOwner } from '../endpoint.decider';

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
  constructor(private readonly endpoints: EndpointStreams) {}

  async execute({ owner, endpointId }: DeleteWebhookEndpointCommand): Promise<{ id: string; deleted: true }> {
    await this.endpoints.handle(owner.mode, endpointId, { type: 'DeleteEndpoint', owner, now: new Date().toISOString() });
    return { id: endpointId, deleted: true };
  }
}
