import { Injectable } from '@nestjs/common';
import type { Handled, StreamCommands } from '../event-store/stream-commands';
import { MODES, Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import type { WebhookEndpointView } from './endpoint-queries';
import { EndpointCommand, endpointDecider, EndpointEvent, EndpointOwner, EndpointState } from './endpoint.decider';

/** The endpoint object of the API, built from the stream (the same fields the read model serves). */
export function toEndpointView(state: EndpointState): WebhookEndpointView {
  return {
    id: state.endpoint_id,
    object: 'webhook_endpoint',
    url: state.url,
    events: [...state.events],
    description: state.description,
    enabled: state.enabled,
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

/**
 * How commands find endpoints and record their facts: on their streams, decided by the
 * endpoint decider and run by StreamCommands, never on webhook_endpoints, so a lagging
 * projection cannot turn an endpoint just created into a 404 (issue 9).
 */
@Injectable()
export class EndpointStreams {
  private readonly endpoints: StreamCommands<EndpointCommand, EndpointEvent, EndpointState | null>;

  constructor(writer: EventWriter) {
    this.endpoints = writer.commands(endpointDecider);
  }

  /** Decides a command on an endpoint's stream. */
  handle(mode: Mode, endpointId: string, command: EndpointCommand): Promise<Handled<EndpointState | null, EndpointEvent>> {
    return this.endpoints.handle(Streams.webhookEndpoint(mode, endpointId), command);
  }

  /** One of the owner's endpoints, not deleted, as its stream has it now. */
  async find(owner: EndpointOwner, endpointId: string): Promise<EndpointState | undefined> {
    const { state } = await this.endpoints.load(Streams.webhookEndpoint(owner.mode, endpointId));
    return state && !state.deleted && state.account_id === owner.accountId ? state : undefined;
  }

  /** Who owns an endpoint (an id alone names no mode), for the operator API, which acts across accounts. */
  async owner(endpointId: string): Promise<EndpointOwner | undefined> {
    for (const mode of MODES) {
      const { state } = await this.endpoints.load(Streams.webhookEndpoint(mode, endpointId));
      if (state && !state.deleted) return { accountId: state.account_id, mode };
    }
    return undefined;
  }
}
