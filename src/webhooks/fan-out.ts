import { Inject, Injectable } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { SETTINGS, Settings } from '../config/settings';
import type { Queryable } from '../database/database';
import type { RecordedEvent } from '../event-store/event-store';
import { newId } from '../platform/ids';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { webhookEndpointsProjection } from '../../projections/webhook-endpoints.projection';
import { WebhookEndpointDeleted, WebhookEvents } from './events';
import { envelope, toPublicEvent } from './public-events';

/**
 * Its row in projection_checkpoints. Not a projection: `projections rebuild` never sees
 * it, since rewinding it would queue every past event again.
 */
export const FAN_OUT_CHECKPOINT = 'subscriber:webhook_fan_out';

const BATCH_SIZE = 200;
const ENDPOINTS_WAIT_MS = 5000;

/**
 * The persistent subscription behind webhooks: follows the event log and turns each
 * domain event with a public type into one pending delivery per matching enabled endpoint
 * of its account and mode. Deliveries are inserted in the transaction that moves the
 * checkpoint and are unique on (event, endpoint), so each is created exactly once.
 */
@Injectable()
export class WebhookFanOut {
  /** Emits 'queued' after a batch created deliveries, so local workers need not wait for their poll. */
  readonly queued = new EventEmitter();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly projections: ProjectionRunner,
  ) {
    this.queued.setMaxListeners(0);
  }

  start(): Promise<void> {
    let created = 0;
    return this.projections.subscribe({
      name: FAN_OUT_CHECKPOINT,
      batchSize: BATCH_SIZE,
      // A webhook that cannot be queued is set aside; every other event still goes out.
      whenFailing: 'park',
      relevant: (event) => event.type === WebhookEvents.WebhookEndpointDeleted || toPublicEvent(event) !== undefined,
      apply: async (tx, events) => {
        created = 0;
        for (const event of events) created += await this.fanOut(tx, event);
      },
      // Endpoint changes recorded before these events must be visible to the batch.
      before: async (events) => {
        const last = events[events.length - 1].position;
        const ready = await this.projections.waitFor(last, { projections: [webhookEndpointsProjection.name], timeoutMs: ENDPOINTS_WAIT_MS });
        if (!ready) throw new Error('webhook_endpoints read model is behind; retrying the batch');
      },
      onCommitted: () => {
        if (created) this.queued.emit('queued');
      },
    });
  }

  stop(): Promise<void> {
    return this.projections.unsubscribe(FAN_OUT_CHECKPOINT);
  }

  private async fanOut(tx: Queryable, event: RecordedEvent): Promise<number> {
    if (event.type === WebhookEvents.WebhookEndpointDeleted) {
      // Nothing will ever send these; close them so the log says why.
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'failed', error = 'the endpoint was deleted', next_attempt_at = NULL, updated_at = now()
          WHERE endpoint_id = $1 AND status = 'pending'`,
        [(event.data as WebhookEndpointDeleted).endpoint_id],
      );
      return 0;
    }
    const mapped = toPublicEvent(event);
    if (!mapped) return 0;
    // Endpoints created after the event (a subscriber catching up) do not receive it.
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM webhook_endpoints
        WHERE account_id = $1 AND mode = $2 AND enabled AND events @> $3::jsonb AND created_position < $4`,
      [mapped.accountId, mapped.mode, JSON.stringify([mapped.type]), event.position],
    );
    if (!rows.length) return 0;
    const payload = envelope(event, mapped);
    const firstAttempt = new Date(event.createdAt.getTime() + this.settings.webhookRetrySchedule[0] * 1000);
    let created = 0;
    for (const endpoint of rows) {
      const { rowCount } = await tx.query(
        `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, mode, event_type, payload, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
        [newId('whd'), event.id, endpoint.id, mapped.accountId, mapped.mode, mapped.type, payload, firstAttempt],
      );
      created += rowCount;
    }
    return created;
  }
}
