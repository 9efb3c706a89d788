import type { Projection } from '../src/projection-runner/projection';
import type { WebhookEndpointCreated, WebhookEndpointDeleted, WebhookEndpointSecretRotated, WebhookEndpointUpdated } from '../src/webhooks/events';
import { WEBHOOK_ENDPOINTS_READ_MODEL } from '../src/webhooks/endpoint-queries';

/**
 * webhook_endpoints: the endpoint API and the webhook fan-out read it. created_position
 * lets the fan-out skip events older than the endpoint when it catches up. The delivery
 * worker signs with secret_sealed, and with previous_secret_sealed too until
 * previous_secret_expires_at (a rotation, issue 24).
 */
export const webhookEndpointsProjection: Projection = {
  name: WEBHOOK_ENDPOINTS_READ_MODEL,
  version: 2, // 2: the previous secret of a rotation (issue 24)
  tables: ['webhook_endpoints'],
  schema: `
    CREATE TABLE IF NOT EXISTS webhook_endpoints (
      id               text PRIMARY KEY,
      account_id       text NOT NULL,
      mode             text NOT NULL,
      url              text NOT NULL,
      events           jsonb NOT NULL,
      description      text NOT NULL,
      enabled          boolean NOT NULL,
      secret_sealed    text NOT NULL,
      previous_secret_sealed     text,
      previous_secret_expires_at timestamptz,
      created_position text NOT NULL,
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhook_endpoints_by_owner ON webhook_endpoints (account_id, mode, created_at, id);`,
  handles: ['WebhookEndpointCreated', 'WebhookEndpointUpdated', 'WebhookEndpointDeleted', 'WebhookEndpointSecretRotated'],
  whenFailing: 'park',
  async apply(tx, event) {
    if (event.type === 'WebhookEndpointCreated') {
      const e = event.data as WebhookEndpointCreated;
      await tx.query(
        `INSERT INTO webhook_endpoints
           (id, account_id, mode, url, events, description, enabled, secret_sealed, created_position, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $10)
         ON CONFLICT (id) DO NOTHING`,
        [e.endpoint_id, e.account_id, e.mode, e.url, JSON.stringify(e.events), e.description, e.enabled, e.secret_sealed, event.position, e.created_at],
      );
    } else if (event.type === 'WebhookEndpointUpdated') {
      const e = event.data as WebhookEndpointUpdated;
      const c = e.changes;
      await tx.query(
        `UPDATE webhook_endpoints SET
           url = COALESCE($2, url), events = COALESCE($3::jsonb, events),
           description = COALESCE($4, description), enabled = COALESCE($5, enabled), updated_at = $6
         WHERE id = $1`,
        [e.endpoint_id, c.url ?? null, c.events ? JSON.stringify(c.events) : null, c.description ?? null, c.enabled ?? null, e.updated_at],
      );
    } else if (event.type === 'WebhookEndpointSecretRotated') {
      const e = event.data as WebhookEndpointSecretRotated;
      await tx.query(
        `UPDATE webhook_endpoints
            SET secret_sealed = $2, previous_secret_sealed = $3, previous_secret_expires_at = $4, updated_at = $5
          WHERE id = $1`,
        [e.endpoint_id, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at, e.rotated_at],
      );
    } else {
      await tx.query('DELETE FROM webhook_endpoints WHERE id = $1', [(event.data as WebhookEndpointDeleted).endpoint_id]);
    }
  },
};
