import { Logger } from '@nestjs/common';
import type { Database, Queryable } from '../database/database';
import type { EventStore, Position, RecordedEvent, Subscription } from '../event-store/event-store';
import { ApplyBatch, applyCheckpointedBatch, moveCheckpoint, readCheckpoint, skipBatch } from './checkpoint';
import { parkEvent } from './parked-events';

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
  /** The event types apply and before act on (every type when absent); the others are read past, and only move the checkpoint. */
  types?: readonly string[];
  /** Runs before the batch's transaction: side effects that are appends of their own (idempotent). */
  before?: (events: RecordedEvent[]) => Promise<void>;
  /** After each batch that moved the checkpoint. */
  onCommitted?: (events: RecordedEvent[]) => void;
  /** When the consumer has read to the end of the readable log. */
  onCaughtUp?: () => Promise<void>;
  /**
   * Background work (a rebuild beside the live build) yields to the live system: after each
   * batch it pauses this percentage of the time the batch took to handle.
   */
  pausePercent?: () => number;
}

export interface ConsumerOptions {
  /** Failures on one event before it is parked (or the consumer reports itself stalled). */
  maxAttempts: number;
}

const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;
/**
 * How long progress over batches with nothing for this consumer stays unstored. Most
 * consumers have nothing to do with most events; storing each such move rewrote their
 * checkpoint rows on every append, and those dead row versions pile up while any
 * transaction on the server holds the xmin horizon back.
 */
const STORE_SKIPPED_AFTER_MS = 1000;

/**
 * Runs one consumer from its stored checkpoint, a checkpointed batch at a time. A batch that
 * fails is retried one event at a time, so the events before the bad one are applied and
 * the bad one is known; that event is retried with back-off and, after maxAttempts, parked
 * or reported stalled according to the consumer's policy.
 */
export class Consumer {
  private readonly logger: Logger;
  private subscription?: Subscription;
  /** The stored checkpoint, as this consumer last wrote or read it. */
  private expected!: Position;
  /** Where it has read to: ahead of `expected` by batches it had nothing to do with, not stored yet. */
  private readTo!: Position;
  /** Batches and checkpoint writes run one at a time. */
  private writing: Promise<unknown> = Promise.resolve();
  private storeTimer?: NodeJS.Timeout;
  /** Set when storing found the checkpoint moved by another instance: the subscription resumes there. */
  private resumeAt?: Position;
  private failing?: { eventId: string; count: number };
  private stopped = false;
  private wakeSleep?: () => void;
  /**
   * When a paced consumer's last pause ended, while it is catching up: the read of its next
   * batch happens from then on, and counts as work to pace (for a rebuild, reading past the
   * events of no concern is most of the work).
   */
  private pausedUntil?: number;

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
    this.readTo = stored;
    this.subscription = this.store.subscribeToAll(stored, (events, readTo) => this.exclusive(() => this.handle(events, readTo)), {
      batchSize: this.spec.batchSize,
      types: this.spec.types,
      onCaughtUp: async () => {
        // What follows is a wait for appends, not work.
        this.pausedUntil = undefined;
        await this.spec.onCaughtUp?.();
      },
      onError: (error) => this.logger.error((error as Error).message),
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    await this.subscription?.stop();
    this.subscription = undefined;
    clearTimeout(this.storeTimer);
    await this.exclusive(() => this.storeSkipped()).catch(() => undefined);
  }

  /** Stopped on an event it keeps failing on (policy 'stop'): it will not move until that succeeds. */
  get stalled(): boolean {
    return this.spec.whenFailing === 'stop' && (this.failing?.count ?? 0) >= this.options.maxAttempts;
  }

  /** Every event up to here is handled (applied, or of no concern to this consumer), stored or not. */
  get position(): Position {
    return this.readTo;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async handle(events: RecordedEvent[], readTo: Position): Promise<Position> {
    const started = this.pausedUntil ?? performance.now();
    const position = await this.handleBatch(events, readTo);
    const pausePercent = this.spec.pausePercent?.() ?? 0;
    if (pausePercent > 0) {
      await this.sleep(((performance.now() - started) * pausePercent) / 100);
      this.pausedUntil = performance.now();
    }
    return position;
  }

  private async handleBatch(events: RecordedEvent[], readTo: Position): Promise<Position> {
    if (this.resumeAt) {
      const at = this.resumeAt;
      this.resumeAt = undefined;
      return at;
    }
    try {
      return await this.applyBatch(events, readTo);
    } catch (error) {
      if (events.length === 1) return this.failed(events[0], error);
      // Find the event that fails: apply the batch one event at a time.
      for (const event of events) {
        try {
          await this.applyBatch([event], event.position);
        } catch (error) {
          return this.failed(event, error);
        }
      }
      return this.applyBatch([], readTo);
    }
  }

  /**
   * Applies a batch that follows `readTo`, moving the stored checkpoint from `expected`
   * (over any skipped batches too) to `to`; resolves to where the consumer now stands.
   */
  private async applyBatch(events: RecordedEvent[], to: Position): Promise<Position> {
    if (!events.length) {
      // Most events concern a few consumers, which read past the rest: nothing to write now.
      this.readTo = to;
      this.failing = undefined;
      this.spec.onCommitted?.(events);
      this.storeTimer ??= setTimeout(() => void this.exclusive(() => this.storeSkipped()).catch(() => undefined), STORE_SKIPPED_AFTER_MS);
      return to;
    }
    await this.spec.before?.(events);
    const outcome = await applyCheckpointedBatch(this.db, this.spec.name, this.expected, events, to, this.spec.apply);
    this.expected = outcome.position;
    this.readTo = outcome.position;
    if (!outcome.moved) {
      this.failing = undefined;
      this.spec.onCommitted?.(events);
    }
    return outcome.position;
  }

  /** Stores progress made over batches of no concern, in one statement. */
  private async storeSkipped(): Promise<void> {
    clearTimeout(this.storeTimer);
    this.storeTimer = undefined;
    if (this.readTo === this.expected) return;
    const outcome = await skipBatch(this.db, this.spec.name, this.expected, this.readTo);
    this.expected = outcome.position;
    if (outcome.moved) {
      // Another instance moved it (this one lost its lease): go on from where it stands.
      this.readTo = outcome.position;
      this.resumeAt = outcome.position;
    }
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
        return this.readTo;
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
    return this.readTo;
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
      await parkEvent(tx, this.spec.name, event, message, attempts);
      await moveCheckpoint(tx, this.spec.name, this.expected, event.position);
    });
    this.expected = event.position;
    this.readTo = event.position;
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
