import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, RecordedEvent, Subscription } from '../event-store/event-store';
import { newId } from '../platform/ids';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { webhookEndpointsProjection } from '../../projections/webhook-endpoints.projection';
import { WebhookEndpointDeleted, WebhookEvents } from './events';
import { DOMAIN_TYPES_WITH_PUBLIC_EVENTS, envelope, toPublicEvent } from './public-events';

/** The persistent subscription group of every instance's fan-out. */
export const FAN_OUT_GROUP = 'webhook_fan_out';

const ENDPOINTS_WAIT_MS = 5000;

/**
 * Turns each domain event with a public type into one pending delivery per matching
 * enabled endpoint of its account and mode. It consumes a persistent subscription: the
 * fan-outs of all instances share the events, and one that dies mid-event leaves it to
 * another. An event handled twice creates its deliveries once: they are unique on
 * (event, endpoint). Delivery itself (the retry schedule, the log, signatures) is the
 * DeliveryWorker's, on those rows.
 */
@Injectable()
export class WebhookFanOut {
  private readonly logger = new Logger('WebhookFanOut');
  /**
   * 'queued' after an event created deliveries, so local workers need not wait for their
   * poll; 'handled' (event id) once an event is fanned out.
   */
  readonly events = new EventEmitter();
  private subscription?: Subscription;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly projections: ProjectionRunner,
  ) {
    this.events.setMaxListeners(0);
  }

  start(): void {
    this.subscription ??= this.store.subscribePersistent(
      FAN_OUT_GROUP,
      {
        types: [...DOMAIN_TYPES_WITH_PUBLIC_EVENTS, WebhookEvents.WebhookEndpointDeleted],
        // A new group reads the whole log: deliveries that exist already are not created again.
        maxRetries: 10,
        messageTimeoutMs: 30_000,
        bufferSize: 32,
        onError: (error) => this.logger.warn(`fan-out: ${error instanceof Error ? error.message : String(error)}`),
      },
      async (event, retryCount) => {
        try {
          await this.fanOut(event);
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          this.logger.warn(`${event.type} ${event.id} not fanned out (retry ${retryCount}): ${reason}`);
          throw error;
        }
        this.events.emit('handled', event.id);
      },
    );
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  private async fanOut(event: RecordedEvent): Promise<void> {
    // Endpoint changes recorded before this event must be visible to it.
    const ready = await this.projections.waitFor(event.position, { projections: [webhookEndpointsProjection.name], timeoutMs: ENDPOINTS_WAIT_MS });
    if (!ready) throw new Error('the webhook_endpoints read model is behind');
    if (event.type === WebhookEvents.WebhookEndpointDeleted) {
      // Nothing will ever send these; close them so the log says why.
      await this.db.query(
        `UPDATE webhook_deliveries SET status = 'failed', error = 'the endpoint was deleted', next_attempt_at = NULL, updated_at = now()
          WHERE endpoint_id = $1 AND status = 'pending'`,
        [(event.data as WebhookEndpointDeleted).endpoint_id],
      );
      return;
    }
    const mapped = toPublicEvent(event);
    if (!mapped) return;
    // Endpoints created after the event (a new group catching up) do not receive it.
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT id FROM webhook_endpoints
        WHERE account_id = $1 AND mode = $2 AND enabled AND events @> $3::jsonb AND created_position < $4`,
      [mapped.accountId, mapped.mode, JSON.stringify([mapped.type]), event.position],
    );
    if (!rows.length) return;
    const firstAttempt = new Date(event.createdAt.getTime() + this.settings.webhookRetrySchedule[0] * 1000);
    const { rowCount } = await this.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, mode, event_type, payload, next_attempt_at)
       SELECT id, $2, endpoint_id, $3, $4, $5, $6, $7 FROM unnest($1::text[], $8::text[]) AS d (id, endpoint_id)
       ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
      [rows.map(() => newId('whd')), event.id, mapped.accountId, mapped.mode, mapped.type, envelope(event, mapped), firstAttempt, rows.map((r) => r.id)],
    );
    if (rowCount) this.events.emit('queued');
  }
}
