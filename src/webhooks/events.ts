import type { Mode } from '../platform/mode';

/** Facts of a webhook endpoint, on stream webhookendpoint-<mode>-<id>. */
export interface WebhookEndpointCreated {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  /** The signing secret sealed with the service key (secret-box.ts); never plaintext. */
  secret_sealed: string;
  created_at: string;
}

export interface WebhookEndpointUpdated {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  /** Only the fields the PATCH changed. */
  changes: Partial<Pick<WebhookEndpointCreated, 'url' | 'events' | 'description' | 'enabled'>>;
  updated_at: string;
}

export interface WebhookEndpointDeleted {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  deleted_at: string;
}

/**
 * A new signing secret. The one it replaces keeps signing beside it until
 * previous_secret_expires_at; both null: the old secret stopped at once (expires_in 0).
 */
export interface WebhookEndpointSecretRotated {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  rotated_at: string;
}

/**
 * The owner asked for a webhook.test event at this endpoint. Its public event id (a uuid)
 * and delivery id are chosen by the request, so the request can answer with them before the
 * fan-out has queued the delivery.
 */
export interface WebhookEndpointTestRequested {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  event_id: string;
  delivery_id: string;
  requested_at: string;
}

export const WebhookEvents = {
  WebhookEndpointCreated: 'WebhookEndpointCreated',
  WebhookEndpointUpdated: 'WebhookEndpointUpdated',
  WebhookEndpointDeleted: 'WebhookEndpointDeleted',
  WebhookEndpointSecretRotated: 'WebhookEndpointSecretRotated',
  WebhookEndpointTestRequested: 'WebhookEndpointTestRequested',
} as const;
