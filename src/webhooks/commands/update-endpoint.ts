import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { WebhookEndpointView } from '../endpoint-queries';
import { EndpointStreams, toEndpointView } from '../endpoint-streams';
import type { EndpointOwner } from '../endpoint.decider';
import { safeUrl } from './create-endpoint';

export interface EndpointChanges {
  url?: string;
  events?: string[];
  description?: string;
  enabled?: boolean;
}

export class UpdateWebhookEndpointCommand extends Command<WebhookEndpointView> {
  constructor(
    readonly owner: EndpointOwner,
    readonly endpointId: string,
    readonly changes: EndpointChanges,
  ) {
    super();
  }
}

@CommandHandler(UpdateWebhookEndpointCommand)
export class UpdateWebhookEndpointHandler implements ICommandHandler<UpdateWebhookEndpointCommand> {
  constructor(private readonly endpoints: EndpointStreams) {}

  async execute({ owner, endpointId, changes: requested }: UpdateWebhookEndpointCommand): Promise<WebhookEndpointView> {
    // A null field is treated as absent, as elsewhere in the API.
    const url = requested.url != null ? await safeUrl(owner.mode, requested.url) : undefined;
    const { state } = await this.endpoints.handle(owner.mode, endpointId, {
      type: 'UpdateEndpoint',
      owner,
      url,
      events: requested.events,
      description: requested.description,
      enabled: requested.enabled,
      now: new Date().toISOString(),
    });
    // From the stream's state after the update, not the read model, which may still be behind.
    return toEndpointView(state!);
  }
}
