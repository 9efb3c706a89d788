import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, RecordedEvent, Subscription } from '../event-store/event-store';
import { Batcher } from '../platform/batcher';
import { newId } from '../platform/ids';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { WebhookEndpointDeleted, WebhookEndpointTestRequested, WebhookEvents } from './events';
import { DOMAIN_TYPES_WITH_PUBLIC_EVENTS, envelope, TEST_EVENT_TYPE, testEnvelope, toPublicEvent } from './public-events';
import { WEBHOOK_ENDPOINTS_READ_MODEL } from './endpoint-queries';

/** The persistent subscription group of every instance's fan-out. */
export const FAN_OUT_GROUP = 'webhook_fan_out';
/** Deliveries of a failing event after its first before the group parks it. */
export const FAN_OUT_MAX_RETRIES = 10;

const ENDPOINTS_WAIT_MS = 5000;
/** Events fanned out by one pair of statements (endpoints matched, deliveries inserted). */
const BATCH = 64;
/** Batches written at once. */
const MAX_FLUSHES = 4;

/**
 * Turns each domain event with a public type into one pending delivery per matching
 * enabled endpoint of its account and mode. It consumes a persistent subscription: the
 * fan-outs of all instances share the events, and one that dies mid-event leaves it to
 * another. An event handled twice creates its deliveries once: they are unique on
 * (event, endpoint). A test request (WebhookEndpointTestRequested) becomes one delivery to
 * its endpoint alone. The events a consumer holds are fanned out in batches: one statement
 * matches their endpoints, one inserts their deliveries. Delivery itself (the retry
 * schedule, the log, signatures) is the DeliveryWorker's, on those rows.
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
  /**
   * The events handed out together are fanned out together: a few statements per batch,
   * not per event, up to MAX_FLUSHES batches at once so an event never waits for another's
   * batch to finish. Each event is still acknowledged (or refused) on its own: one that
   * cannot be fanned out is tried alone and does not hold back (and in the end park) the others.
   */
  private readonly batches = new Batcher<RecordedEvent>((events) => this.fanOut(events), BATCH, MAX_FLUSHES);

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
        types: [...DOMAIN_TYPES_WITH_PUBLIC_EVENTS, WebhookEvents.WebhookEndpointDeleted, WebhookEvents.WebhookEndpointTestRequested],
        // A new group reads the whole log: deliveries that exist already are not created again.
        maxRetries: FAN_OUT_MAX_RETRIES,
        messageTimeoutMs: 30_000,
        // Twice a batch: the next batch is claimed while one is written.
        bufferSize: BATCH * 2,
        onError: (error) => this.logger.warn(`fan-out: ${error instanceof Error ? error.message : String(error)}`),
      },
      async (event, retryCount) => {
        try {
          await this.batches.add(event);
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

  private async fanOut(events: RecordedEvent[]): Promise<void> {
    // Endpoint changes recorded before these events must be visible to them.
    const last = events.reduce((max, e) => (e.position > max ? e.position : max), events[0].position);
    const ready = await this.projections.waitFor(last, { projections: [WEBHOOK_ENDPOINTS_READ_MODEL], timeoutMs: ENDPOINTS_WAIT_MS });
    if (!ready) throw new Error('the webhook_endpoints read model is behind');
    const deleted = events.filter((e) => e.type === WebhookEvents.WebhookEndpointDeleted);
    if (deleted.length) {
      // Nothing will ever send these; close them so the log says why.
      await this.db.query(
        `UPDATE webhook_deliveries SET status = 'failed', error = 'the endpoint was deleted', next_attempt_at = NULL, updated_at = now()
          WHERE endpoint_id = ANY($1::text[]) AND status = 'pending'`,
        [deleted.map((e) => (e.data as WebhookEndpointDeleted).endpoint_id)],
      );
    }
    const tests = events.filter((e) => e.type === WebhookEvents.WebhookEndpointTestRequested);
    if (tests.length) await this.queueTests(tests);
    const mapped = events.flatMap((event) => {
      if (event.type === WebhookEvents.WebhookEndpointDeleted || event.type === WebhookEvents.WebhookEndpointTestRequested) return [];
      const m = toPublicEvent(event);
      return m ? [{ event, m }] : [];
    });
    if (!mapped.length) return;
    // Endpoints created after an event (a new group catching up) do not receive it.
    const { rows } = await this.db.query<{ i: string; id: string }>(
      `SELECT ev.i, e.id
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS ev (account_id, mode, event_type, position, i)
         JOIN webhook_endpoints e
           ON e.account_id = ev.account_id AND e.mode = ev.mode AND e.enabled
          AND e.events @> jsonb_build_array(ev.event_type) AND e.created_position < ev.position`,
      [mapped.map((x) => x.m.accountId), mapped.map((x) => x.m.mode), mapped.map((x) => x.m.type), mapped.map((x) => x.event.position)],
    );
    if (!rows.length) return;
    const delay = this.settings.webhookRetrySchedule[0] * 1000;
    const payloads = new Map<number, string>();
    const picked = rows.map((row) => {
      const index = Number(row.i) - 1;
      const { event, m } = mapped[index];
      if (!payloads.has(index)) payloads.set(index, envelope(event, m));
      return { event, m, endpointId: row.id, payload: payloads.get(index)! };
    });
    const { rowCount } = await this.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, mode, event_type, payload, next_attempt_at)
       SELECT * FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
       ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
      [
        picked.map(() => newId('whd')),
        picked.map((p) => p.event.id),
        picked.map((p) => p.endpointId),
        picked.map((p) => p.m.accountId),
        picked.map((p) => p.m.mode),
        picked.map((p) => p.m.type),
        picked.map((p) => p.payload),
        picked.map((p) => new Date(p.event.createdAt.getTime() + delay).toISOString()),
      ],
    );
    if (rowCount) this.events.emit('queued');
  }

  /**
   * One delivery per test request, to its endpoint alone, under the delivery id the request
   * answered with. An endpoint deleted since is gone from the read model: nothing is queued.
   */
  private async queueTests(tests: RecordedEvent[]): Promise<void> {
    const delay = this.settings.webhookRetrySchedule[0] * 1000;
    const data = tests.map((e) => e.data as WebhookEndpointTestRequested);
    const { rowCount } = await this.db.query(
      `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, mode, event_type, payload, next_attempt_at)
       SELECT t.id, t.event_id, e.id, e.account_id, e.mode, $5, t.payload, t.due
         FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $6::timestamptz[]) AS t (id, event_id, endpoint_id, payload, due)
         JOIN webhook_endpoints e ON e.id = t.endpoint_id
       ON CONFLICT DO NOTHING`,
      [
        data.map((d) => d.delivery_id),
        data.map((d) => d.event_id),
        data.map((d) => d.endpoint_id),
        tests.map(testEnvelope),
        TEST_EVENT_TYPE,
        tests.map((e) => new Date(e.createdAt.getTime() + delay).toISOString()),
      ],
    );
    if (rowCount) this.events.emit('queued');
  }
}
