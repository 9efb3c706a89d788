/**
 * Persistent subscriptions (competing consumers) on the Postgres event store, with the
 * tables of migration 0007. A group's queue holds the events of its types it has read from
 * the log and not yet seen acknowledged. Whichever consumer finds the queue short reads the
 * log on (one at a time: the group row is locked, others skip it); consumers lease queued
 * events with FOR UPDATE SKIP LOCKED, so each is held by one consumer at a time, and a
 * lease that runs out (its consumer died) makes the event available again, as a retry.
 */
import type { Database } from '../../database/database';
import { PersistentHandler, PersistentSubscriptionOptions, Position, RecordedEvent, START, Subscription, toPosition } from '../event-store';
import { COLUMNS, EventRow, LAST_OF_COMMIT, toRecorded } from './event-rows';

/** Events one read of the log moves into a group's queue. */
const FEED_BATCH = 500;
/** An idle consumer looks again this often even without an append: expired leases come back this way. */
const IDLE_POLL_MS = 250;
const ERROR_PAUSE_MS = 1000;

interface Claimed {
  queuePosition: Position;
  retryCount: number;
  event: RecordedEvent;
}

export class PostgresPersistentSubscriptions {
  constructor(
    private readonly db: Database,
    /** Resolves at the next append (this process's, or another's by NOTIFY), or after maxMs. */
    private readonly waitForAppend: (maxMs: number) => Promise<void>,
  ) {}

  subscribe(group: string, options: PersistentSubscriptionOptions, handler: PersistentHandler): Subscription {
    const consumer = new GroupConsumer(this.db, this.waitForAppend, group, options, handler);
    return { stop: () => consumer.stop() };
  }

  async parkedEvents(group: string): Promise<RecordedEvent[]> {
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM persistent_subscription_events q JOIN events USING (event_id)
        WHERE q.group_name = $1 AND q.parked_at IS NOT NULL ORDER BY q.parked_at, q.position`,
      [group],
    );
    return rows.map(toRecorded);
  }

  /**
   * EventStoreDB's replay: the parked events leave the parked list at once and go back to
   * the queue as if never handed out (deliveries 0: the next delivery's retry count is 0),
   * where the group's consumers claim them at their next look (an idle one looks every
   * IDLE_POLL_MS); acknowledged, they are deleted like any other. Their queue positions are
   * older than anything read since, so they go out first, as the server's retries do.
   */
  async replayParked(group: string): Promise<number> {
    const { rowCount } = await this.db.query(
      `UPDATE persistent_subscription_events SET parked_at = NULL, park_reason = NULL, deliveries = 0, leased_until = NULL
        WHERE group_name = $1 AND parked_at IS NOT NULL`,
      [group],
    );
    return rowCount;
  }
}

class GroupConsumer {
  private stopped = false;
  /** Queue positions of the events this consumer's handlers hold. */
  private readonly held = new Set<Position>();
  private acknowledged: Position[] = [];
  private wakeLoop?: () => void;
  private readonly loop: Promise<void>;

  constructor(
    private readonly db: Database,
    private readonly waitForAppend: (maxMs: number) => Promise<void>,
    private readonly group: string,
    private readonly options: PersistentSubscriptionOptions,
    private readonly handler: PersistentHandler,
  ) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeLoop?.();
    await this.loop;
    // What handlers still hold is handed out again now, not when the leases run out.
    try {
      await this.flushAcknowledged();
      if (this.held.size) {
        await this.db.query(
          `UPDATE persistent_subscription_events SET leased_until = NULL
            WHERE group_name = $1 AND position = ANY($2::text[]) AND parked_at IS NULL`,
          [this.group, [...this.held]],
        );
      }
    } catch (error) {
      this.options.onError?.(error);
    }
  }

  private async run(): Promise<void> {
    let joined = false;
    // Waited on from before the log is looked at: an append committing meanwhile still ends the idle wait.
    let appended = this.nextAppend();
    while (!this.stopped) {
      if (appended.arrived) appended = this.nextAppend();
      try {
        if (!joined) joined = await this.join();
        const free = this.options.bufferSize - this.held.size;
        const { claimed: first, unread } = free > 0 ? await this.claim(free) : { claimed: [], unread: false };
        let claimed = first;
        // Nothing in the log after read_to: no locking read (a write, and a transaction id, every poll).
        if (free > claimed.length && unread && (await this.readLogIntoQueue())) claimed = claimed.concat((await this.claim(free - claimed.length)).claimed);
        for (const c of claimed) this.dispatch(c);
        await this.flushAcknowledged();
        if (!claimed.length || this.held.size >= this.options.bufferSize) await this.idle(appended.promise);
      } catch (error) {
        if (this.stopped) break;
        this.options.onError?.(error);
        await this.idle(this.waitForAppend(ERROR_PAUSE_MS));
      }
    }
  }

  /** Creates the group if it does not exist; its types follow the newest consumer's. */
  private async join(): Promise<true> {
    await this.db.query(
      `INSERT INTO persistent_subscription_groups (group_name, types, read_to) VALUES ($1, $2, $3)
       ON CONFLICT (group_name) DO UPDATE SET types = EXCLUDED.types`,
      [this.group, this.options.types, this.options.startAfter ?? START],
    );
    return true;
  }

  /** The next append, or the poll. */
  private nextAppend(): { promise: Promise<void>; arrived: boolean } {
    const next = { promise: Promise.resolve(), arrived: false };
    next.promise = this.waitForAppend(IDLE_POLL_MS).then(() => {
      next.arrived = true;
    });
    return next;
  }

  /** Until a handler finishes, or `appended` resolves (an append arrives, or the poll comes round). */
  private idle(appended: Promise<void>): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wakeLoop = resolve;
      void appended.then(resolve);
    });
  }

  private dispatch(claimed: Claimed): void {
    const { queuePosition, retryCount, event } = claimed;
    this.held.add(queuePosition);
    // Its lease ran out on its last retry: no handler said no, but it may be what kills them.
    if (retryCount > this.options.maxRetries) {
      void this.settle(queuePosition, this.park(queuePosition, `not acknowledged within ${this.options.messageTimeoutMs} ms`));
      return;
    }
    let outcome: Promise<void>;
    try {
      outcome = this.handler(event, retryCount);
    } catch (error) {
      outcome = Promise.reject(error);
    }
    void this.settle(
      queuePosition,
      outcome.then(
        () => {
          if (!this.stopped) this.acknowledged.push(queuePosition);
        },
        (error) => {
          if (this.stopped) return;
          const reason = error instanceof Error ? error.message : String(error);
          return retryCount >= this.options.maxRetries ? this.park(queuePosition, reason) : this.release(queuePosition);
        },
      ),
    );
  }

  private async settle(queuePosition: Position, outcome: Promise<void>): Promise<void> {
    try {
      await outcome;
    } catch (error) {
      this.options.onError?.(error);
    }
    // Stopped: stop() hands out again whatever is still held, this one included.
    if (this.stopped) return;
    this.held.delete(queuePosition);
    this.wakeLoop?.();
  }

  /**
   * Leases up to `limit` queued events, and tells in the same statement whether the log
   * holds any event (of any type) after the group's read_to: an idle poll is then this one
   * read-only statement. read_to stands at the horizon after a complete read, and no event
   * can appear below the horizon any more, so an event after it is a new one.
   */
  private async claim(limit: number): Promise<{ claimed: Claimed[]; unread: boolean }> {
    const { rows } = await this.db.query<Partial<EventRow> & { queue_position: string | null; deliveries: number | null; unread: boolean }>(
      `WITH picked AS (
         SELECT position FROM persistent_subscription_events
          WHERE group_name = $1 AND parked_at IS NULL AND (leased_until IS NULL OR leased_until < now())
          ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE persistent_subscription_events q
            SET deliveries = q.deliveries + 1, leased_until = now() + $3::int * interval '1 millisecond'
           FROM picked WHERE q.group_name = $1 AND q.position = picked.position
         RETURNING q.event_id, q.position AS queue_position, q.deliveries
       ), read_to AS (
         -- Positions are zero-padded text; xid8 would read the leading zeros as octal.
         SELECT split_part(read_to, ':', 1)::numeric::text::xid8 AS commit_id, split_part(read_to, ':', 2)::bigint AS prepare
           FROM persistent_subscription_groups WHERE group_name = $1
       )
       -- Not EXISTS: with the bound unknown when planning, EXISTS picks a scan of the whole log
       -- (624 ms at 1M events, on every idle poll); the first event in commit order walks the index.
       SELECT (SELECT 1 FROM events
                WHERE (transaction_id, global_position) > ((SELECT commit_id FROM read_to), (SELECT prepare FROM read_to))
                ORDER BY transaction_id, global_position LIMIT 1) IS NOT NULL AS unread, c.*
         FROM (SELECT 1) AS one
         LEFT JOIN (SELECT claimed.queue_position, claimed.deliveries, ${COLUMNS} FROM claimed JOIN events USING (event_id)) AS c ON true
        ORDER BY c.queue_position`,
      [this.group, limit, this.options.messageTimeoutMs],
    );
    const claimed = rows
      .filter((row) => row.queue_position !== null)
      .map((row) => ({ queuePosition: row.queue_position!, retryCount: Number(row.deliveries) - 1, event: toRecorded(row as EventRow) }));
    return { claimed, unread: rows[0]?.unread ?? true };
  }

  /**
   * Reads the log on from where the group stands into its queue. False when there was
   * nothing new, or another consumer is doing it (it holds the group row).
   */
  private readLogIntoQueue(): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { rows: groups } = await tx.query<{ read_to: string; types: string[] }>(
        'SELECT read_to, types FROM persistent_subscription_groups WHERE group_name = $1 FOR UPDATE SKIP LOCKED',
        [this.group],
      );
      if (!groups.length) return false;
      const { read_to: readTo, types } = groups[0];
      // Its own statement first, as every reader of the log does (migration 0006).
      const { rows: h } = await tx.query<{ horizon: string }>('SELECT horizon::text FROM events_horizon()');
      const horizon = BigInt(h[0].horizon);
      const [commit, prepare] = readTo.split(':');
      const { rows } = await tx.query<{ n: string; last: string | null }>(
        `WITH next AS (
           SELECT lpad(transaction_id::text, 20, '0') || ':' || lpad(global_position::text, 20, '0') AS position, event_id
             FROM events
            WHERE transaction_id < $2::text::xid8 AND (transaction_id, global_position) > ($3::text::xid8, $4::bigint)
              AND type = ANY($5::text[])
            ORDER BY transaction_id, global_position LIMIT $6
         ), queued AS (
           INSERT INTO persistent_subscription_events (group_name, position, event_id)
           SELECT $1, position, event_id FROM next ON CONFLICT DO NOTHING
         )
         SELECT count(*) AS n, max(position) AS last FROM next`,
        [this.group, horizon.toString(), BigInt(commit).toString(), BigInt(prepare).toString(), types, FEED_BATCH],
      );
      const read = Number(rows[0].n);
      // A short read saw everything below the horizon: no event can appear there any more.
      const next = read === FEED_BATCH ? rows[0].last! : toPosition(horizon - 1n, LAST_OF_COMMIT);
      if (next > readTo) await tx.query('UPDATE persistent_subscription_groups SET read_to = $2 WHERE group_name = $1', [this.group, next]);
      return read > 0;
    });
  }

  private async flushAcknowledged(): Promise<void> {
    if (!this.acknowledged.length) return;
    const positions = this.acknowledged;
    this.acknowledged = [];
    try {
      await this.db.query('DELETE FROM persistent_subscription_events WHERE group_name = $1 AND position = ANY($2::text[])', [this.group, positions]);
    } catch (error) {
      this.acknowledged.push(...positions);
      throw error;
    }
  }

  private async release(queuePosition: Position): Promise<void> {
    await this.db.query('UPDATE persistent_subscription_events SET leased_until = NULL WHERE group_name = $1 AND position = $2', [this.group, queuePosition]);
  }

  private async park(queuePosition: Position, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE persistent_subscription_events SET parked_at = clock_timestamp(), park_reason = $3, leased_until = NULL
        WHERE group_name = $1 AND position = $2`,
      [this.group, queuePosition, reason],
    );
  }
}
