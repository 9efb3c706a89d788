import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import type { WebhookEndpointView } from '../endpoint-queries';
import { EndpointOwner, EndpointStreams, evolveEndpoint, toEndpointView } from '../endpoint-streams';
import { WebhookEndpointUpdated, WebhookEvents } from '../events';
import { safeUrl, knownEventTypes } from './create-endpoint';

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
  constructor(
    private readonly endpoints: EndpointStreams,
    private readonly writer: EventWriter,
  ) {}

  async execute({ owner, endpointId, changes: requested }: UpdateWebhookEndpointCommand): Promise<WebhookEndpointView> {
    const stream = Streams.webhookEndpoint(owner.mode, endpointId);
    // A null field is treated as absent, as elsewhere in the API.
    const url = requested.url != null ? await safeUrl(owner.mode, requested.url) : undefined;
    return this.writer.retryOnConflict(async () => {
      const { state, revision } = await this.endpoints.loadOwn(owner, endpointId);
      const changes: WebhookEndpointUpdated['changes'] = {};
      if (url !== undefined && url !== state.url) changes.url = url;
      if (requested.events != null) changes.events = knownEventTypes(requested.events);
      if (requested.description != null && requested.description !== state.description) changes.description = requested.description;
      if (requested.enabled != null && requested.enabled !== state.enabled) changes.enabled = requested.enabled;
      if (!Object.keys(changes).length) return toEndpointView(state);
      const updated: WebhookEndpointUpdated = {
        endpoint_id: endpointId,
        account_id: owner.accountId,
        mode: owner.mode,
        changes,
        updated_at: new Date().toISOString(),
      };
      const event = { type: WebhookEvents.WebhookEndpointUpdated, data: { ...updated } };
      await this.writer.append(stream, [event], revision);
      // From the stream's state after this event, not the read model, which may still be behind.
      return toEndpointView(evolveEndpoint(state, event)!);
    });
  }
}
