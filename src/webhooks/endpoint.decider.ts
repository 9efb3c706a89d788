/**
 * A webhook endpoint's stream (`webhookendpoint-<mode>-<id>`) as a pure decider: no I/O,
 * no clock; the command carries its id, the URL already checked (DNS is I/O), the signing
 * secret already sealed, and `now`.
 */
import type { Decider } from '../event-store/stream-commands';
import type { AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import type { Mode } from '../platform/mode';
import type {
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookEndpointSecretRotated,
  WebhookEndpointTestRequested,
  WebhookEndpointUpdated,
} from './events';
import { isPublicEventType } from './public-events';

export type EndpointOwner = Pick<AuthContext, 'accountId' | 'mode'>;

export type EndpointEvent =
  | { type: 'WebhookEndpointCreated'; data: WebhookEndpointCreated }
  | { type: 'WebhookEndpointUpdated'; data: WebhookEndpointUpdated }
  | { type: 'WebhookEndpointDeleted'; data: WebhookEndpointDeleted }
  | { type: 'WebhookEndpointSecretRotated'; data: WebhookEndpointSecretRotated }
  | { type: 'WebhookEndpointTestRequested'; data: WebhookEndpointTestRequested };

export type EndpointCommand =
  | {
      type: 'CreateEndpoint';
      endpoint_id: string;
      account_id: string;
      mode: Mode;
      /** Checked and normalised (url-policy.ts). */
      url: string;
      /** As asked for: unknown types are dropped, duplicates collapse. */
      events: string[];
      description: string;
      secret_sealed: string;
      now: string;
    }
  /** PATCH: an absent or null field stays as it is; a url is checked and normalised already. */
  | {
      type: 'UpdateEndpoint';
      owner: EndpointOwner;
      url?: string | null;
      events?: string[] | null;
      description?: string | null;
      enabled?: boolean | null;
      now: string;
    }
  | { type: 'DeleteEndpoint'; owner: EndpointOwner; now: string }
  /** The new secret sealed already; the old one signs too for expires_in_seconds (0: not at all). */
  | { type: 'RotateSecret'; owner: EndpointOwner; secret_sealed: string; expires_in_seconds: number; now: string }
  | { type: 'RequestTestEvent'; owner: EndpointOwner; event_id: string; delivery_id: string; now: string };

export interface EndpointState extends WebhookEndpointCreated {
  deleted: boolean;
  updated_at: string;
  /** Absent until a rotation kept the old secret signing. */
  previous_secret_sealed?: string | null;
  previous_secret_expires_at?: string | null;
}

/** null: the stream has no endpoint. */
export const initialState = (): EndpointState | null => null;

export function evolve(state: EndpointState | null, event: EndpointEvent): EndpointState | null {
  switch (event.type) {
    case 'WebhookEndpointCreated':
      return { ...event.data, deleted: false, updated_at: event.data.created_at };
    case 'WebhookEndpointUpdated':
      return state && { ...state, ...event.data.changes, updated_at: event.data.updated_at };
    case 'WebhookEndpointDeleted':
      return state && { ...state, deleted: true };
    case 'WebhookEndpointSecretRotated': {
      const { secret_sealed, previous_secret_sealed, previous_secret_expires_at, rotated_at } = event.data;
      return state && { ...state, secret_sealed, previous_secret_sealed, previous_secret_expires_at, updated_at: rotated_at };
    }
    default:
      return state;
  }
}

/** Unknown event types are silently dropped (spec part 4); duplicates collapse. */
export function knownEventTypes(events: string[]): string[] {
  return [...new Set(events.filter(isPublicEventType))];
}

/** One of the owner's endpoints, not deleted; another account's is 404 like a missing one. */
function own(state: EndpointState | null, owner: EndpointOwner): EndpointState {
  if (!state || state.deleted || state.account_id !== owner.accountId) throw Errors.notFound('webhook endpoint');
  return state;
}

export function decide(command: EndpointCommand, state: EndpointState | null): EndpointEvent[] {
  switch (command.type) {
    case 'CreateEndpoint':
      // An id is created once (what appending at no_stream answered when it was taken).
      if (state) throw Errors.conflict();
      return [
        {
          type: 'WebhookEndpointCreated',
          data: {
            endpoint_id: command.endpoint_id,
            account_id: command.account_id,
            mode: command.mode,
            url: command.url,
            events: knownEventTypes(command.events),
            description: command.description,
            enabled: true,
            secret_sealed: command.secret_sealed,
            created_at: command.now,
          },
        },
      ];
    case 'UpdateEndpoint': {
      const endpoint = own(state, command.owner);
      const changes: WebhookEndpointUpdated['changes'] = {};
      if (command.url != null && command.url !== endpoint.url) changes.url = command.url;
      if (command.events != null) changes.events = knownEventTypes(command.events);
      if (command.description != null && command.description !== endpoint.description) changes.description = command.description;
      if (command.enabled != null && command.enabled !== endpoint.enabled) changes.enabled = command.enabled;
      // Nothing changes: nothing is recorded.
      if (!Object.keys(changes).length) return [];
      return [
        {
          type: 'WebhookEndpointUpdated',
          data: { endpoint_id: endpoint.endpoint_id, account_id: command.owner.accountId, mode: command.owner.mode, changes, updated_at: command.now },
        },
      ];
    }
    case 'DeleteEndpoint': {
      const endpoint = own(state, command.owner);
      return [
        {
          type: 'WebhookEndpointDeleted',
          data: { endpoint_id: endpoint.endpoint_id, account_id: command.owner.accountId, mode: command.owner.mode, deleted_at: command.now },
        },
      ];
    }
    case 'RotateSecret': {
      const endpoint = own(state, command.owner);
      // One previous secret at most: rotating again drops the one before it at once.
      const keep = command.expires_in_seconds > 0;
      return [
        {
          type: 'WebhookEndpointSecretRotated',
          data: {
            endpoint_id: endpoint.endpoint_id,
            account_id: command.owner.accountId,
            mode: command.owner.mode,
            secret_sealed: command.secret_sealed,
            previous_secret_sealed: keep ? endpoint.secret_sealed : null,
            previous_secret_expires_at: keep ? new Date(Date.parse(command.now) + command.expires_in_seconds * 1000).toISOString() : null,
            rotated_at: command.now,
          },
        },
      ];
    }
    case 'RequestTestEvent': {
      const endpoint = own(state, command.owner);
      // A paused endpoint receives nothing (spec part 6): queued, the test would wait unseen.
      if (!endpoint.enabled) throw Errors.invalidRequest('The webhook endpoint is disabled; enable it to send it a test event.');
      return [
        {
          type: 'WebhookEndpointTestRequested',
          data: {
            endpoint_id: endpoint.endpoint_id,
            account_id: command.owner.accountId,
            mode: command.owner.mode,
            event_id: command.event_id,
            delivery_id: command.delivery_id,
            requested_at: command.now,
          },
        },
      ];
    }
  }
}

export const endpointDecider: Decider<EndpointCommand, EndpointEvent, EndpointState | null> = { initialState, evolve, decide };
