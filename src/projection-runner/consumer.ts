import { Logger } from '@nestjs/common';
import type { Database, Queryable } from '../database/database';
import type { EventStore, Position, RecordedEvent, Subscription } from '../event-store/event-store';
import { ApplyBatch, applyCheckpointedBatch, moveCheckpoint, readCheckpoint, skipBatch } from './checkpoint';

/**
 * What a consumer does with an event it keeps failing on:
 * - 'park': set it aside in parked_events with the error and go on (a read model missing one
 *   row is better than a read model that stops);
 * - 'stop': never go past it, retry with back-off and report the stall loudly (money: a
 *   skipped sale or refund is worse than waiting).
 */
export type FailurePolicy = 'park' | 'stop';

export interface ConsumerSpec {
  /** Its checkpoint row, lease and parked events are under this name. */
  name: string;
  batchSize: number;
  whenFailing: FailurePolicy;
  /** Runs inside the batch's transaction, which also moves the checkpoint. */
  apply: ApplyBatch;
  /** The events apply and before act on; a batch of none only moves the checkpoint. */
  relevant: (event: RecordedEvent) => boolean;
  /** Runs before the batch's transaction: side effects that are appends of their own (idempotent). */
  before?: (events: RecordedEvent[]) => Promise<void>;
  /** After each batch that moved the checkpoint. */
  onCommitted?: (events: RecordedEvent[]) => void;
  /** When the consumer has read to the end of the readable log. */
  onCaughtUp?: () => Promise<void>;
}

export interface ConsumerOptions {
  /** Failures on one event before it is parked (or the consumer reports itself stalled). */
  maxAttempts: number;
}

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/**
 * Runs one consumer from its stored checkpoint, a checkpointed batch at a time. A batch that
 * fails is retried one event at a time, so the events before the bad one are applied and
 * the bad one is known; that event is retried with back-off and, after maxAttempts, parked
 * or reported stalled according to the consumer's policy.
 */
export class Consumer {
  private readonly logger: Logger;
  private subscription?: Subscription;
  private expected!: Position;
  private failing?: { eventId: string; count: number };
  private stopped = false;
  private wakeSleep?: () => void;

  constructor(
    private readonly db: Database,
    private readonly store: EventStore,
    readonly spec: ConsumerSpec,
    private readonly options: ConsumerOptions,
  ) {
    this.logger = new Logger(`Consumer ${spec.name}`);
  }

  async start(): Promise<void> {
    const stored = await readCheckpoint(this.db, this.spec.name);
    if (stored === undefined) throw new Error(`no checkpoint row for ${this.spec.name}`);
    this.expected = stored;
    this.subscription = this.store.subscribeToAll(stored, (events) => this.handle(events), {
      batchSize: this.spec.batchSize,
      onCaughtUp: this.spec.onCaughtUp,
      onError: (error) => this.logger.error((error as Error).message),
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  private async handle(events: RecordedEvent[]): Promise<Position> {
    try {
      return await this.applyBatch(events);
    } catch (error) {
      if (events.length === 1) return this.failed(events[0], error);
      // Find the event that fails: apply the batch one event at a time.
      for (const event of events) {
        try {
          await this.applyBatch([event]);
        } catch (error) {
          return this.failed(event, error);
        }
      }
      return this.expected;
    }
  }

  /** Applies a batch from `expected`; resolves to where the consumer now stands. */
  private async applyBatch(events: RecordedEvent[]): Promise<Position> {
    const last = events[events.length - 1].position;
    let outcome: { position: Position; moved: boolean };
    if (events.some(this.spec.relevant)) {
      await this.spec.before?.(events);
      outcome = await applyCheckpointedBatch(this.db, this.spec.name, this.expected, events, this.spec.apply);
    } else {
      // Every consumer sees every event; most concern a few of them, and cost one statement here.
      outcome = await skipBatch(this.db, this.spec.name, this.expected, last);
    }
    this.expected = outcome.position;
    if (!outcome.moved) {
      this.failing = undefined;
      this.spec.onCommitted?.(events);
    }
    return outcome.position;
  }

  private async failed(event: RecordedEvent, error: unknown): Promise<Position> {
    const message = error instanceof Error ? error.message : String(error);
    const count = this.failing?.eventId === event.id ? this.failing.count + 1 : 1;
    this.failing = { eventId: event.id, count };
    const exhausted = count >= this.options.maxAttempts;
    if (exhausted && this.spec.whenFailing === 'park') {
      try {
        await this.park(event, message, count);
        this.logger.warn(`parked ${event.type} ${event.id} at ${event.position} after ${count} attempts: ${message}`);
        this.failing = undefined;
        return this.expected;
      } catch (parkError) {
        this.logger.error(`could not park ${event.id}: ${(parkError as Error).message}`);
      }
    }
    await this.report(event, message, count, exhausted && this.spec.whenFailing === 'stop').catch(() => undefined);
    if (exhausted && this.spec.whenFailing === 'stop') {
      this.logger.error(`STALLED on ${event.type} ${event.id} at ${event.position} (attempt ${count}); it never skips an event: ${message}`);
    } else {
      this.logger.warn(`${event.type} ${event.id} failed (attempt ${count} of ${this.options.maxAttempts}): ${message}`);
    }
    await this.sleep(Math.min(FIRST_BACKOFF_MS * 2 ** (count - 1), MAX_BACKOFF_MS));
    return this.expected;
  }

  /** Records the failure on the checkpoint row, where `svc projections status` shows it. */
  private async report(event: RecordedEvent, message: string, count: number, stalled: boolean): Promise<void> {
    await this.db.query(
      `UPDATE projection_checkpoints
          SET error = $2, error_event_id = $3, error_count = $4,
              stalled_since = CASE WHEN $5 THEN COALESCE(stalled_since, now()) ELSE stalled_since END
        WHERE name = $1`,
      [this.spec.name, message, event.id, count, stalled],
    );
  }

  /** Sets the event aside and moves the checkpoint past it, in one transaction. */
  private async park(event: RecordedEvent, message: string, attempts: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      const stored = await readCheckpoint(tx, this.spec.name, true);
      if (stored !== this.expected) throw new Error('checkpoint moved while parking');
      await insertParked(tx, this.spec.name, event, message, attempts);
      await moveCheckpoint(tx, this.spec.name, this.expected, event.position);
    });
    this.expected = event.position;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeSleep = undefined;
        resolve();
      }
      this.wakeSleep = done;
    });
  }
}

async function insertParked(tx: Queryable, consumer: string, event: RecordedEvent, error: string, attempts: number): Promise<void> {
  await tx.query(
    `INSERT INTO parked_events (consumer, event_id, position, type, event, error, attempts)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
     ON CONFLICT (consumer, event_id) DO UPDATE SET error = EXCLUDED.error, attempts = parked_events.attempts + EXCLUDED.attempts`,
    [consumer, event.id, event.position, event.type, JSON.stringify(event), error, attempts],
  );
}
