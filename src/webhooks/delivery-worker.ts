import { Inject, Injectable, Logger } from '@nestjs/common';
import { setMaxListeners } from 'node:events';
import { SETTINGS, Settings } from '../config/settings';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { Metrics } from '../metrics/metrics';
import { SECRET_BOX } from './commands/create-endpoint';
import { WebhookFanOut } from './fan-out';
import { HttpSender, SendOutcome } from './http-sender';
import { SecretBox } from '../platform/secret-box';
import { signatureHeader } from './signature';
import { Batcher } from '../platform/batcher';

/** Sends in flight per worker. */
export const DELIVERY_CONCURRENCY = 64;
const IDLE_POLL_MS = 500;
/** Outcomes recorded by one statement at most. */
const RECORD_BATCH = 128;
const ERROR_PAUSE_MS = 1000;
/** The per-minute attempt counts are kept this long (the overview charts the last hour), as read_model_lag is. */
export const ATTEMPT_COUNTS_KEPT_HOURS = 24;
/** How often one worker's outcome statement also deletes the expired counts. */
const PRUNE_EVERY_MS = 60_000;

interface Claimed {
  id: string;
  endpoint_id: string;
  mode: Mode;
  payload: string;
  attempts: number;
  url: string;
  secret_sealed: string;
  /** Set while a rotated-out secret still signs. */
  previous_secret_sealed: string | null;
}

interface Outcome {
  id: string;
  attempt: number;
  mode: Mode;
  status: 'succeeded' | 'failed' | 'pending';
  responseStatus: number | null;
  error: string | null;
  delaySeconds: number | null;
  body: string | null;
}

/**
 * Sends due deliveries. A claim takes rows with FOR UPDATE SKIP LOCKED and leases them
 * (leased_until), so several workers, in one process or many, never take the same
 * delivery while its lease runs. A worker that dies mid-attempt leaves its lease to
 * expire; the delivery is then claimed again: at-least-once. Stopping behaves the same
 * way on purpose (in-flight requests are aborted, not recorded), so the crash path is the
 * one every restart exercises. Results are recorded in batches (one statement per batch of outcomes, which also
 * adds them to the minute's counts); a slot is free again once its result is written.
 */
@Injectable()
export class DeliveryWorker {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly sender = new HttpSender();
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();
  private loop?: Promise<void>;
  private stopped = true;
  private wake?: () => void;
  /** New deliveries (or stop) announced while the loop was not asleep (mid-claim): the next sleep is skipped. */
  private woken = false;
  private readonly onQueued = () => this.wakeUp();
  /**
   * Outcomes share statements: each takes what arrived while the previous one ran, so
   * results are written as soon as the database is free, never one round trip per
   * delivery under load. An outcome the database refuses is written on its own, so it
   * cannot leave the others unrecorded (their leases would run out and they would be sent again).
   */
  private readonly outcomes = new Batcher<Outcome>((batch) => this.writeOutcomes(batch), RECORD_BATCH);
  private prunedAt = 0;

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    private readonly fanOut: WebhookFanOut,
    private readonly metrics: Metrics,
  ) {}

  /** The lease outlives the timeout, so only a dead worker's delivery is taken again. */
  private get leaseMs(): number {
    return this.settings.webhookTimeoutMs + Math.max(1000, this.settings.webhookTimeoutMs);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    // Every in-flight request listens on the one signal.
    setMaxListeners(DELIVERY_CONCURRENCY + 1, this.abort.signal);
    this.fanOut.events.on('queued', this.onQueued);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.fanOut.events.off('queued', this.onQueued);
    this.abort.abort();
    this.wakeUp();
    await this.loop;
    await Promise.all([...this.inFlight]);
    this.sender.close();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const free = DELIVERY_CONCURRENCY - this.inFlight.size;
      // Claiming for half the slots at once, not one slot at a time, saves a round trip per delivery.
      if (free < DELIVERY_CONCURRENCY / 2) {
        await this.sleep(IDLE_POLL_MS);
        continue;
      }
      let claimed: Claimed[];
      try {
        claimed = await this.claim(free);
      } catch (error) {
        if (this.stopped) break;
        this.logger.error(`claiming deliveries: ${(error as Error).message}`);
        await this.sleep(ERROR_PAUSE_MS);
        continue;
      }
      if (this.stopped) break;
      for (const delivery of claimed) {
        const task: Promise<void> = this.deliver(delivery)
          .catch((error) => this.logger.error(`delivery ${delivery.id}: ${(error as Error).message}`))
          .finally(() => {
            this.inFlight.delete(task);
            // A free slot matters only to a loop asleep for one.
            this.wake?.();
          });
        this.inFlight.add(task);
      }
      if (claimed.length < free) await this.sleep(IDLE_POLL_MS);
    }
  }

  private wakeUp(): void {
    if (this.wake) this.wake();
    else this.woken = true;
  }

  /**
   * Resolves after ms, or earlier on a wake-up (new deliveries, a free slot, stop); at once
   * when deliveries were queued since the last sleep (during a claim, which may not have
   * seen them), so they are not left for the next poll.
   */
  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  /** One statement: claim, lease, count the attempt and open its log row, atomically. */
  private async claim(limit: number): Promise<Claimed[]> {
    // Deliveries of a paused or deleted endpoint stay pending and are not taken. The previous
    // secret is read through to_jsonb: while version 1 of the read model still serves (a
    // rolling deploy, its new version catching up) the column is not there and reads as null.
    const { rows } = await this.db.query<Claimed>(
      `WITH due AS (
         SELECT d.id, e.url, e.secret_sealed,
                CASE WHEN (to_jsonb(e) ->> 'previous_secret_expires_at')::timestamptz > now()
                     THEN to_jsonb(e) ->> 'previous_secret_sealed' END AS previous_secret_sealed
           FROM webhook_deliveries d
           JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.enabled
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.leased_until IS NULL OR d.leased_until < now())
          ORDER BY d.next_attempt_at
          LIMIT $1
          FOR UPDATE OF d SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1,
                leased_until = now() + $2 * interval '1 millisecond',
                error = CASE WHEN d.leased_until IS NULL THEN d.error ELSE 'the previous attempt was interrupted (the worker stopped)' END,
                updated_at = now()
           FROM due
          WHERE d.id = due.id
         RETURNING d.id, d.endpoint_id, d.mode, d.payload, d.attempts, due.url, due.secret_sealed, due.previous_secret_sealed
       ), opened AS (
         INSERT INTO webhook_delivery_attempts (delivery_id, attempt) SELECT id, attempts FROM claimed
       )
       SELECT * FROM claimed`,
      [limit, this.leaseMs],
    );
    return rows;
  }

  private async deliver(delivery: Claimed): Promise<void> {
    let outcome: SendOutcome;
    const timer = this.metrics.webhookDuration.startTimer();
    try {
      const secrets = [delivery.secret_sealed, delivery.previous_secret_sealed].flatMap((sealed) => (sealed ? [this.box.open(sealed, delivery.endpoint_id)] : []));
      outcome = await this.sender.send({
        url: delivery.url,
        mode: delivery.mode,
        body: delivery.payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'svc-webhooks/1',
          'svc-signature': signatureHeader(secrets, delivery.payload),
        },
        timeoutMs: this.settings.webhookTimeoutMs,
        signal: this.abort.signal,
      });
    } catch (error) {
      outcome = { error: (error as Error).message };
    }
    // Stopped mid-attempt: leave the lease to expire, exactly as a crash would.
    if (this.abort.signal.aborted) return;
    timer();
    await this.record(delivery, outcome);
  }

  private record(delivery: Claimed, outcome: SendOutcome): Promise<void> {
    const succeeded = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    const error = succeeded ? null : outcome.error ?? `receiver answered ${outcome.status}`;
    const schedule = this.settings.webhookRetrySchedule;
    const last = delivery.attempts >= schedule.length;
    const status = succeeded ? 'succeeded' : last ? 'failed' : 'pending';
    this.metrics.webhookAttempts.inc({ outcome: status === 'pending' ? 'retrying' : status });
    const delaySeconds = succeeded || last ? null : schedule[delivery.attempts];
    return this.outcomes.add({ id: delivery.id, attempt: delivery.attempts, mode: delivery.mode, status, responseStatus: outcome.status ?? null, error, delaySeconds, body: outcome.body ?? null });
  }

  /**
   * One statement, so each attempt row, its delivery and the minute's counts change together.
   * The delivery is guarded on the attempt number: a worker whose lease ran out must not
   * overwrite a newer attempt. An attempt finishes once (finished_at IS NULL), so the counts
   * (webhook_attempts_per_minute, the console's overview) grow by the attempts finished here
   * and an outcome written again (its batch retried item by item) is not counted twice.
   *
   * Why the counts do not serialize the deliveries: many finish in the same minute, but they
   * are not recorded one per statement. The Batcher writes one statement at a time per
   * worker, with every outcome that arrived meanwhile (up to RECORD_BATCH), and the statement
   * adds them up first: one upsert per mode and minute (two at a minute's turn). So the
   * minute's row is locked once per batch, until that statement commits, and the writers
   * waiting on it are the other instances' workers (one statement each at most), not the
   * deliveries in flight. Rows are upserted in (mode, minute) order, so two batches that
   * both touch test and live take the locks in one order and cannot deadlock.
   *
   * Once a minute per worker the statement also deletes the counts older than
   * ATTEMPT_COUNTS_KEPT_HOURS (minutes never written to again), so the table stays a day long.
   */
  private async writeOutcomes(batch: Outcome[]): Promise<void> {
    const prune = Date.now() - this.prunedAt >= PRUNE_EVERY_MS;
    if (prune) this.prunedAt = Date.now();
    await this.db.query(
      `WITH expired AS (
         DELETE FROM webhook_attempts_per_minute WHERE $9::boolean AND minute < now() - $10 * interval '1 hour'
       ), r AS (
         SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::integer[], $5::text[], $6::integer[], $7::text[], $8::text[])
           AS r (id, attempt, status, response_status, error, delay_seconds, body, mode)
       ), attempt AS (
         UPDATE webhook_delivery_attempts a
            SET response_status = r.response_status, error = r.error, response_body = r.body, finished_at = now()
           FROM r WHERE a.delivery_id = r.id AND a.attempt = r.attempt AND a.finished_at IS NULL
         RETURNING r.mode, a.response_status, a.finished_at
       ), counted AS (
         INSERT INTO webhook_attempts_per_minute AS m (mode, minute, succeeded, failed)
         SELECT mode, date_trunc('minute', finished_at),
                count(*) FILTER (WHERE response_status BETWEEN 200 AND 299),
                count(*) FILTER (WHERE response_status IS NULL OR response_status NOT BETWEEN 200 AND 299)
           FROM attempt GROUP BY 1, 2 ORDER BY 1, 2
         ON CONFLICT (mode, minute) DO UPDATE SET succeeded = m.succeeded + EXCLUDED.succeeded, failed = m.failed + EXCLUDED.failed
       )
       UPDATE webhook_deliveries d
          SET status = r.status, response_status = r.response_status, error = r.error, leased_until = NULL, updated_at = now(),
              next_attempt_at = CASE WHEN r.delay_seconds IS NULL THEN NULL ELSE now() + r.delay_seconds * interval '1 second' END
         FROM r
        WHERE d.id = r.id AND d.attempts = r.attempt AND d.status = 'pending'`,
      [
        batch.map((o) => o.id),
        batch.map((o) => o.attempt),
        batch.map((o) => o.status),
        batch.map((o) => o.responseStatus),
        batch.map((o) => o.error),
        batch.map((o) => o.delaySeconds),
        batch.map((o) => o.body),
        batch.map((o) => o.mode),
        prune,
        ATTEMPT_COUNTS_KEPT_HOURS,
      ],
    );
  }
}
