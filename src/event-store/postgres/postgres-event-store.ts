import { randomUUID } from 'node:crypto';
import { Database } from '../../database/database';
import { attributed } from '../../platform/request-context';
import {
  AppendListener,
  AppendResult,
  BatchHandler,
  ReadAllBackwardOptions,
  ReadAllOptions,
  EventStore,
  ExpectedRevision,
  NewEvent,
  PersistentHandler,
  PersistentSubscriptionOptions,
  Position,
  ReadStreamOptions,
  RecordedEvent,
  START,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
  parsePosition,
  toPosition,
} from '../event-store';
import { COLUMNS, columnsOfTypes, EventRow, LAST_OF_COMMIT, toRecorded } from './event-rows';
import { PostgresPersistentSubscriptions } from './persistent-subscriptions';

/** How long a subscriber sleeps when no notification arrives (lost LISTEN connection). */
const POLL_FALLBACK_MS = 250;
/**
 * How soon a reader looks again when an in-flight append held its horizon: an append in
 * another process tells us when it commits (debounced), but not when it rolls back.
 */
const HELD_REPOLL_MS = 10;
/**
 * Other instances hear of this one's appends at most this often: each NOTIFY is a
 * transaction of its own, and one per append cost 8 appenders about 15% of their rate.
 */
const NOTIFY_INTERVAL_MS = 5;
/** Events of the log's tail kept in memory for this process's subscriptions. */
const TAIL_EVENTS = 5000;
/**
 * How many events one read of the tail fetches: at least the largest batch a subscription
 * asks for (the projection runner's catch-up batches are 2000), so that a batch shorter
 * than asked means the read reached the end of the readable log.
 */
const TAIL_READ = 2000;

/**
 * Rows below the horizon can no longer appear behind a position we hand out. The horizon
 * is computed by its own statement (see migration 0003): the read that follows takes a
 * newer snapshot, in which every appender below the horizon has finished.
 */
interface Horizon {
  horizon: string;
  /** An append was in flight: events above the horizon may be on their way. */
  appending: boolean;
}

/** What one read of the log gave a reader. */
interface LogRead {
  events: RecordedEvent[];
  /** The last event the read went through, handed over or not (or where it began, when there was none). */
  readTo: Position;
  /** The read reached the end of the readable log. */
  complete: boolean;
  /** An append was in flight: events above the horizon may be on their way. */
  appending: boolean;
}

/**
 * The log's tail as this process last read it, shared by all its subscriptions: consumers
 * at the head (every projection's live build, fulfilment, fan-out) woken by one append
 * cost one read of the log, not one each (issue 14). Invariant: the events after `from`
 * and up to `to` are exactly `events`, in order.
 */
interface Tail {
  from: Position;
  to: Position;
  events: RecordedEvent[];
}

/**
 * The stores open on each PGlite database. Its files belong to one process, so every other
 * instance on it (a second app in one test process) is here, told of an append directly.
 */
const storesOnPglite = new WeakMap<Database, Set<PostgresEventStore>>();

export class PostgresEventStore implements EventStore {
  private tail: Tail | null = null;
  /** The last read of the tail: the append wake-ups it had seen when it began, and whether it ended. */
  private extending: { seq: number; settled: boolean; done: Promise<boolean> } | null = null;
  private readonly wakers = new Set<() => void>();
  /** The wakers waiting for the polling fallback, and the one timer that ends their wait. */
  private readonly pollers = new Set<() => void>();
  private pollDue?: NodeJS.Timeout;
  private readonly appendListeners = new Set<AppendListener>();
  /** Bumped on every wake-up, so a reader can tell an append raced its empty read. */
  private appendSeq = 0;
  private unlisten?: () => Promise<void>;
  /** Signs this process's NOTIFYs: it woke its own readers already. */
  private readonly instance = randomUUID();
  /** The NOTIFY that will tell of the appends since the last one, when one is waiting for its turn. */
  private notifyDue: NodeJS.Timeout | null = null;
  private lastNotify = -Infinity;

  private readonly persistent: PostgresPersistentSubscriptions;

  constructor(private readonly db: Database) {
    this.persistent = new PostgresPersistentSubscriptions(db, (maxMs) => this.waitForAppend(maxMs));
  }

  /** Starts the LISTEN wake-up from other instances' appends; without it subscribers fall back to polling. */
  async start(): Promise<void> {
    if (this.db.kind === 'pglite') {
      const stores = storesOnPglite.get(this.db) ?? new Set();
      storesOnPglite.set(this.db, stores.add(this));
      return;
    }
    try {
      this.unlisten = await this.db.listen('events_appended', (from) => {
        if (from !== this.instance) this.wake();
      });
    } catch {
      // Polling still delivers every event; a failed LISTEN must not stop the service.
    }
  }

  onAppended(listener: AppendListener): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  private wake(): void {
    this.appendSeq++;
    for (const waker of [...this.wakers]) waker();
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const payload = events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: attributed(e.metadata) }));
    try {
      const { rows } = await this.db.query<{ next_revision: string; commit_id: string; last_position: string }>(
        'SELECT * FROM append_to_stream($1, $2, $3::jsonb)',
        [streamId, String(expected), JSON.stringify(payload)],
      );
      const result = { nextRevision: Number(rows[0].next_revision), position: toPosition(rows[0].commit_id, rows[0].last_position) };
      this.wake();
      this.tellOtherInstances();
      for (const listener of this.appendListeners) listener(streamId, events, result);
      return result;
    } catch (error: any) {
      // EV409: the function's own revision check; 23505: a concurrent insert won the race.
      if (error?.code === 'EV409' || error?.code === '23505') throw new WrongExpectedRevisionError(streamId, expected);
      throw error;
    }
  }

  /**
   * One NOTIFY after the commit, never inside the append's transaction (migration 0005),
   * and at most one every NOTIFY_INTERVAL_MS: appends committing meanwhile share the next.
   */
  private tellOtherInstances(): void {
    if (this.db.kind === 'pglite') {
      for (const store of storesOnPglite.get(this.db) ?? []) if (store !== this) store.wake();
      return;
    }
    if (this.notifyDue) return;
    const wait = this.lastNotify + NOTIFY_INTERVAL_MS - performance.now();
    if (wait <= 0) return void this.notifyOtherInstances();
    // Unreferenced: a NOTIFY still due must not keep a process from exiting.
    this.notifyDue = setTimeout(() => void this.notifyOtherInstances(), wait).unref();
  }

  private notifyOtherInstances(): Promise<unknown> {
    clearTimeout(this.notifyDue ?? undefined);
    this.notifyDue = null;
    this.lastNotify = performance.now();
    return this.db.query(`SELECT pg_notify('events_appended', $1)`, [this.instance]).catch(() => undefined);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND stream_revision >= $2 ORDER BY stream_revision LIMIT $3`,
      [streamId, options.fromRevision ?? 0, options.limit ?? null],
    );
    return rows.map(toRecorded);
  }

  private async horizon(): Promise<Horizon> {
    const { rows } = await this.db.query<{ horizon: string; appending: boolean }>('SELECT horizon::text, appending FROM events_horizon()');
    return rows[0];
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.readBatch(options.after, options.limit)).events;
  }

  /**
   * The next `limit` events after `after`, up to the horizon; of those, only the ones of
   * `types` when given. A read of fewer than `limit` is complete: it read the log up to the
   * horizon, and no event can appear below it any more.
   */
  private async readBatch(after: Position, limit: number, types?: readonly string[]): Promise<LogRead & { horizon: string }> {
    const { horizon, appending } = await this.horizon();
    const { commit, prepare } = parsePosition(after);
    // Types filter the columns, not the rows: the scan stays the index walk in log order
    // whatever the planner's statistics say (a type condition in WHERE had it sort the whole
    // rest of the log for each batch), and events of other types come back as their position.
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${types ? columnsOfTypes('$5') : COLUMNS} FROM events
        WHERE transaction_id < $1::text::xid8 AND (transaction_id, global_position) > ($2::text::xid8, $3::bigint)
        ORDER BY transaction_id, global_position
        LIMIT $4`,
      [horizon, commit.toString(), prepare.toString(), limit, ...(types ? [types] : [])],
    );
    const complete = rows.length < limit;
    const last = rows[rows.length - 1];
    const readTo = last ? toPosition(last.commit_id, last.global_position) : after;
    const events = (types ? rows.filter((row) => row.event_id !== null) : rows).map(toRecorded);
    return { events, complete, readTo, appending, horizon };
  }

  /**
   * A subscription's read: from the shared tail when `after` is in it (extended first when
   * it holds less than a batch after `after`), else from the database. A reader ahead of
   * the tail extends it, or moves it to itself when far ahead: the tail follows the readers
   * at the head, and one far behind (a rebuild) reads on its own.
   */
  private async readShared(after: Position, limit: number, types?: readonly string[]): Promise<LogRead> {
    let appending = false;
    if (this.tail && after > this.tail.to) appending = await this.extendTail();
    if (!this.tail || after > this.tail.to) this.tail = { from: after, to: after, events: [] };
    if (after < this.tail.from) return this.readBatch(after, limit, types);
    if (this.eventsAfter(after, limit).length < limit) appending = await this.extendTail();
    // Trimmed or moved while we waited: read on our own.
    const tail = this.tail;
    if (!tail || after < tail.from || after > tail.to) return this.readBatch(after, limit, types);
    const read = this.eventsAfter(after, limit);
    return {
      events: types ? read.filter((e) => types.includes(e.type)) : read,
      complete: read.length < limit,
      readTo: read.length ? read[read.length - 1].position : after,
      appending,
    };
  }

  private eventsAfter(after: Position, limit: number): RecordedEvent[] {
    const events = this.tail?.events ?? [];
    let lo = 0;
    let hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid].position <= after) lo = mid + 1;
      else hi = mid;
    }
    return events.slice(lo, lo + limit);
  }

  /**
   * Reads what follows the tail, once for all the readers asking meanwhile: a reader joins
   * a read still on its way only if no append woke us since it began (else it could miss
   * that append); otherwise its read follows. Resolves to whether an append was in flight.
   */
  private extendTail(): Promise<boolean> {
    const current = this.extending;
    if (current && !current.settled && current.seq === this.appendSeq) return current.done;
    const next = { seq: this.appendSeq, settled: false, done: Promise.resolve(false) };
    next.done = (current?.done ?? Promise.resolve(false))
      .catch(() => false)
      .then(() => this.readIntoTail())
      .finally(() => {
        next.settled = true;
      });
    this.extending = next;
    return next.done;
  }

  private async readIntoTail(): Promise<boolean> {
    const tail = this.tail;
    if (!tail) return false;
    const { events, appending, horizon } = await this.readBatch(tail.to, TAIL_READ);
    // Moved to a reader further ahead meanwhile: this read extends nothing.
    if (this.tail !== tail) return appending;
    tail.events.push(...events);
    // A short read is complete below the horizon: no event can appear there any more.
    const known = events.length === TAIL_READ ? events[events.length - 1].position : toPosition(BigInt(horizon) - 1n, LAST_OF_COMMIT);
    if (known > tail.to) tail.to = known;
    const excess = tail.events.length - TAIL_EVENTS;
    if (excess > 0) tail.from = tail.events.splice(0, excess)[excess - 1].position;
    return appending;
  }

  async readAllBackward(options: ReadAllBackwardOptions): Promise<RecordedEvent[]> {
    const { horizon } = await this.horizon();
    // Below the horizon only, as readAll: an event still being committed under it would later appear among positions already shown.
    const before = options.before ? parsePosition(options.before) : undefined;
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM events
        WHERE transaction_id < $1::text::xid8 AND ($2::text IS NULL OR (transaction_id, global_position) < ($2::text::xid8, $3::bigint))
        ORDER BY transaction_id DESC, global_position DESC
        LIMIT $4`,
      [horizon, before ? before.commit.toString() : null, before ? before.prepare.toString() : null, options.limit],
    );
    return rows.map(toRecorded);
  }

  async headPosition(): Promise<Position> {
    const { horizon } = await this.horizon();
    const { rows } = await this.db.query<{ commit_id: string; global_position: string }>(
      `SELECT transaction_id::text AS commit_id, global_position FROM events WHERE transaction_id < $1::text::xid8
        ORDER BY transaction_id DESC, global_position DESC LIMIT 1`,
      [horizon],
    );
    return rows.length ? toPosition(rows[0].commit_id, rows[0].global_position) : START;
  }

  /**
   * Resolves at the next append notification, or after the polling fallback. The fallback's
   * waiters share one timer: subscriptions that went idle at different moments poll together,
   * and their reads of the tail are one read (each otherwise kept its own phase, a read each).
   * A waiter that joins a poll already due waits less than POLL_FALLBACK_MS, never more.
   */
  waitForAppend(maxMs = POLL_FALLBACK_MS): Promise<void> {
    return new Promise((resolve) => {
      const shared = maxMs === POLL_FALLBACK_MS;
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        this.pollers.delete(done);
        resolve();
      };
      const timer = shared ? undefined : setTimeout(done, maxMs);
      this.wakers.add(done);
      if (shared) {
        this.pollers.add(done);
        this.pollDue ??= setTimeout(() => {
          this.pollDue = undefined;
          for (const poller of [...this.pollers]) poller();
        }, POLL_FALLBACK_MS);
      }
    });
  }

  subscribeToAll(after: Position, onBatch: BatchHandler, options: SubscribeOptions = {}): Subscription {
    let stopped = false;
    let position = after;
    const batchSize = Math.min(options.batchSize ?? 500, TAIL_READ);
    const types = options.types;
    type Read = { from: Position; seen: number; result: Promise<LogRead> };
    const read = (from: Position): Read => {
      const result = this.readShared(from, batchSize, types);
      result.catch(() => undefined); // awaited (and its failure handled) by the loop, or dropped
      return { from, seen: this.appendSeq, result };
    };
    // Catching up (a full batch), the next batch is read while this one is handled.
    let ahead: Read | null = null;
    const loop = (async () => {
      while (!stopped) {
        try {
          const current: Read = ahead?.from === position ? ahead : read(position);
          ahead = null;
          const seen = current.seen;
          const { events: batch, readTo, complete, appending } = await current.result;
          if (stopped) break;
          // Filtered by type, a read of nothing wanted still moves the reader on.
          if (batch.length > 0 || (types && readTo > position)) {
            if (!complete) ahead = read(readTo);
            position = (await onBatch(batch, readTo)) ?? readTo;
            // A handler that resumes elsewhere (a failure, a moved checkpoint) is not caught up.
            if (position !== readTo) continue;
          }
          if (stopped || !complete) continue;
          await options.onCaughtUp?.();
          // A complete read reached the horizon: nothing more can be there until an append
          // is announced (appendSeq moves) or the in-flight one holding the horizon commits.
          if (this.appendSeq === seen) await this.waitForAppend(appending ? HELD_REPOLL_MS : POLL_FALLBACK_MS);
        } catch (error) {
          if (stopped) break;
          options.onError?.(error);
          await this.waitForAppend(1000);
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        this.wake();
        await loop;
      },
    };
  }

  subscribePersistent(group: string, options: PersistentSubscriptionOptions, handler: PersistentHandler): Subscription {
    return this.persistent.subscribe(group, options, handler);
  }

  parkedEvents(group: string): Promise<RecordedEvent[]> {
    return this.persistent.parkedEvents(group);
  }

  replayParked(group: string): Promise<number> {
    return this.persistent.replayParked(group);
  }

  async close(): Promise<void> {
    storesOnPglite.get(this.db)?.delete(this);
    this.wake();
    clearTimeout(this.pollDue);
    this.pollDue = undefined;
    if (this.notifyDue) await this.notifyOtherInstances();
    await this.unlisten?.().catch(() => undefined);
  }
}
