import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '../event-store/event-store';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { MODES } from '../platform/mode';
import { Streams } from '../platform/streams';
import type { WebhookEndpointView } from './endpoint-queries';
import { WebhookEndpointCreated, WebhookEndpointUpdated, WebhookEvents } from './events';

export type EndpointOwner = Pick<AuthContext, 'accountId' | 'mode'>;

export interface EndpointState extends WebhookEndpointCreated {
  deleted: boolean;
  updated_at: string;
}

export interface LoadedEndpoint {
  state: EndpointState;
  /** Revision of the stream's last event: the expected revision of the next append. */
  revision: number;
}

type EndpointEvent = { type: string; data: unknown };

export function evolveEndpoint(state: EndpointState | undefined, event: EndpointEvent): EndpointState | undefined {
  switch (event.type) {
    case WebhookEvents.WebhookEndpointCreated: {
      const created = event.data as WebhookEndpointCreated;
      return { ...created, deleted: false, updated_at: created.created_at };
    }
    case WebhookEvents.WebhookEndpointUpdated: {
      const updated = event.data as WebhookEndpointUpdated;
      return state && { ...state, ...updated.changes, updated_at: updated.updated_at };
    }
    case WebhookEvents.WebhookEndpointDeleted:
      return state && { ...state, deleted: true };
    default:
      return state;
  }
}

/** Folds an endpoint stream; undefined when the stream does not exist. */
export function endpointState(events: readonly EndpointEvent[]): EndpointState | undefined {
  return events.reduce(evolveEndpoint, undefined);
}

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
 * How commands find endpoints: from their streams, never from webhook_endpoints, so a
 * lagging projection cannot turn an endpoint just created into a 404 (issue 9).
 */
@Injectable()
export class EndpointStreams {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /** One of the owner's endpoints, not deleted; another account's is 404 like a missing one. */
  async loadOwn(owner: EndpointOwner, endpointId: string): Promise<LoadedEndpoint> {
    const events = await this.store.readStream(Streams.webhookEndpoint(owner.mode, endpointId));
    const state = endpointState(events);
    if (!state || state.deleted || state.account_id !== owner.accountId) throw Errors.notFound('webhook endpoint');
    return { state, revision: events[events.length - 1].revision };
  }

  /** Who owns an endpoint (an id alone names no mode), for the operator API, which acts across accounts. */
  async owner(endpointId: string): Promise<EndpointOwner | undefined> {
    for (const mode of MODES) {
      const state = endpointState(await this.store.readStream(Streams.webhookEndpoint(mode, endpointId)));
      if (state && !state.deleted) return { accountId: state.account_id, mode };
    }
    return undefined;
  }
}
