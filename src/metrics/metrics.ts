import { Inject, Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, parsePosition } from '../event-store/event-store';
import { ProjectionRunner } from '../projection-runner/projection-runner';

const CHECKOUT_OUTCOMES: Record<string, string> = {
  CheckoutSessionOpened: 'opened',
  PurchaseCompleted: 'completed',
  KeyActivationPaid: 'completed',
  DuplicatePaymentReceived: 'duplicate',
};

/**
 * The Prometheus registry of this process (GET /metrics) and the instruments the code
 * records into. What the database already knows (read model lag, purchases) is read at
 * scrape time, so every instance reports the same truth without counting it twice.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status, from the first byte received to the last sent.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly inferenceCalls = new Counter({
    name: 'svc_inference_calls_total',
    help: 'Chat completions metered, by mode, model and finish (stop, length, cancelled, error).',
    labelNames: ['mode', 'model', 'finish'] as const,
    registers: [this.registry],
  });

  readonly inferenceTokens = new Counter({
    name: 'svc_inference_tokens_total',
    help: 'Tokens of metered chat completions, by mode, model and kind (prompt, completion).',
    labelNames: ['mode', 'model', 'kind'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'svc_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded, retrying, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDuration = new Histogram({
    name: 'svc_webhook_delivery_duration_seconds',
    help: 'Time a receiver took to answer a delivery attempt (or to fail).',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly eventsAppended = new Counter({
    name: 'svc_events_appended_total',
    help: 'Events this process appended to the event store, by type.',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly checkouts = new Counter({
    name: 'svc_checkouts_total',
    help: 'Checkout sessions by outcome: opened, completed (a purchase or a key activation), duplicate (paid for an owned asset, refunded).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Statements on idempotency_keys and the requests they served (src/idempotency: one statement serves a batch). */
  readonly idempotencyStatements = new Counter({
    name: 'svc_idempotency_statements_total',
    help: 'Statements run on idempotency_keys, by kind: take (keys taken or their answers read) and keep (answers kept or keys let go).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly idempotencyRequests = new Counter({
    name: 'svc_idempotency_requests_total',
    help: 'Requests those statements served, by kind; divided by svc_idempotency_statements_total, the mean batch.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly refunds = new Counter({
    name: 'svc_refunds_total',
    help: 'Purchases refunded (recorded on their session).',
    registers: [this.registry],
  });

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) store: EventStore,
    private readonly projections: ProjectionRunner,
  ) {
    collectDefaultMetrics({ register: this.registry });
    this.readModelGauges();
    // Counted where they are appended: each event is appended by one process, so the sum over instances is exact.
    store.onAppended((_stream, events) => {
      for (const { type } of events) {
        this.eventsAppended.inc({ type });
        const outcome = CHECKOUT_OUTCOMES[type];
        if (outcome) this.checkouts.inc({ outcome });
        if (type === 'PurchaseRefunded') this.refunds.inc();
      }
    });
  }

  /** Times every request Fastify answers, labelled with its route template (never the raw URL: ids would explode the series). */
  instrument(fastify: FastifyInstance): void {
    fastify.addHook('onResponse', (request, reply, done) => {
      this.httpDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
  }

  private readModelGauges(): void {
    const projections = this.projections;
    const db = this.db;
    const byProjection = (name: string, help: string, pick: (p: Awaited<ReturnType<ProjectionRunner['status']>>['items'][number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['projection'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const p of (await projections.status()).items) this.set({ projection: p.name }, pick(p));
        },
      });
    byProjection('svc_projection_position', 'Global position of the last event a read model applied (the sequence part).', (p) => Number(parsePosition(p.position).prepare));
    byProjection('svc_projection_lag_seconds', 'Age in seconds of the oldest event a read model has not read yet; 0 when it has read them all.', (p) => p.lag_seconds);
    byProjection('svc_projection_parked_events', 'Events a read model set aside (svc projections parked).', (p) => p.parked);
    byProjection('svc_projection_stalled', '1 while a read model that never skips is stopped on an event.', (p) => (p.stalled_since ? 1 : 0));
    new Gauge({
      name: 'svc_purchases',
      help: 'Purchases by mode and status (completed checkouts; refunded ones included).',
      labelNames: ['mode', 'status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const { rows } = await db.query<{ mode: string; status: string; n: string }>('SELECT mode, status, count(*) AS n FROM purchases GROUP BY mode, status');
        for (const r of rows) this.set({ mode: r.mode, status: r.status }, Number(r.n));
      },
    });
  }
}
