import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../event-store/event-store';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { EndpointQueries, WebhookEndpointView } from '../endpoint-queries';
import { endpointState } from '../endpoint-state';
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
    readonly owner: Pick<AuthContext, 'accountId' | 'mode'>,
    readonly endpointId: string,
    readonly changes: EndpointChanges,
  ) {
    super();
  }
}

@CommandHandler(UpdateWebhookEndpointCommand)
export class UpdateWebhookEndpointHandler implements ICommandHandler<UpdateWebhookEndpointCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
    private readonly endpoints: EndpointQueries,
  ) {}

  async execute({ owner, endpointId, changes: requested }: UpdateWebhookEndpointCommand): Promise<WebhookEndpointView> {
    const stream = Streams.webhookEndpoint(owner.mode, endpointId);
    // A null field is treated as absent, as elsewhere in the API.
    const url = requested.url != null ? await safeUrl(owner.mode, requested.url) : undefined;
    await this.writer.retryOnConflict(async () => {
      const events = await this.store.readStream(stream);
      const state = endpointState(events);
      if (!state || state.deleted || state.account_id !== owner.accountId) throw Errors.notFound('webhook endpoint');
      const changes: WebhookEndpointUpdated['changes'] = {};
      if (url !== undefined && url !== state.url) changes.url = url;
      if (requested.events != null) changes.events = knownEventTypes(requested.events);
      if (requested.description != null && requested.description !== state.description) changes.description = requested.description;
      if (requested.enabled != null && requested.enabled !== state.enabled) changes.enabled = requested.enabled;
      if (!Object.keys(changes).length) return;
      const updated: WebhookEndpointUpdated = {
        endpoint_id: endpointId,
        account_id: owner.accountId,
        mode: owner.mode,
        changes,
        updated_at: new Date().toISOString(),
      };
      await this.writer.append(stream, [{ type: WebhookEvents.WebhookEndpointUpdated, data: { ...updated } }], events[events.length - 1].revision);
    });
    const view = await this.endpoints.find(owner, endpointId);
    if (!view) throw Errors.notFound('webhook endpoint');
    return view;
  }
}
