import { randomUUID } from 'node:crypto';
import { Database, Queryable } from '../../database/database';
import {
  AppendResult,
  BatchHandler,
  ReadAllOptions,
  EventStore,
  ExpectedRevision,
  NewEvent,
  Position,
  RecordedEvent,
  START,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevisionError,
  parsePosition,
  toPosition,
} from '../event-store';

interface EventRow {
  commit_id: string;
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_revision: string;
  type: string;
  data: any;
  metadata: Record<string, unknown>;
  created_at: Date | string;
}

const COLUMNS = `transaction_id::text AS commit_id, global_position, event_id::text, stream_id,
  stream_revision, type, data, metadata, created_at`;

/** How long a subscriber sleeps when no notification arrives (lost LISTEN connection). */
const POLL_FALLBACK_MS = 250;
/**
 * How soon a reader looks again when an in-flight append held its horizon: an append in
 * another process tells us when it commits (debounced), but not when it rolls back.
 */
const HELD_REPOLL_MS = 10;

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

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.stream_revision),
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    position: toPosition(row.commit_id, row.global_position),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}

export class PostgresEventStore implements EventStore {
  private readonly wakers = new Set<() => void>();
  /** Bumped on every wake-up, so a reader can tell an append raced its empty read. */
  private appendSeq = 0;
  private unlisten?: () => Promise<void>;
  /** Signs this process's NOTIFYs: it woke its own readers already. */
  private readonly instance = randomUUID();
  /** 'again': appends committed while a NOTIFY was on its way; one more follows it. */
  private notifying: 'no' | 'yes' | 'again' = 'no';

  constructor(private readonly db: Database) {}

  /** Starts the LISTEN wake-up from other instances' appends; without it subscribers fall back to polling. */
  async start(): Promise<void> {
    try {
      this.unlisten = await this.db.listen('events_appended', (from) => {
        if (from !== this.instance) this.wake();
      });
    } catch {
      // Polling still delivers every event; a failed LISTEN must not stop the service.
    }
  }

  private wake(): void {
    this.appendSeq++;
    for (const waker of [...this.wakers]) waker();
  }

  async append(streamId: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const payload = events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata ?? {} }));
    try {
      const { rows } = await this.db.query<{ next_revision: string; commit_id: string; last_position: string }>(
        'SELECT * FROM append_to_stream($1, $2, $3::jsonb)',
        [streamId, String(expected), JSON.stringify(payload)],
      );
      this.wake();
      this.tellOtherInstances();
      return { nextRevision: Number(rows[0].next_revision), position: toPosition(rows[0].commit_id, rows[0].last_position) };
    } catch (error: any) {
      // EV409: the function's own revision check; 23505: a concurrent insert won the race.
      if (error?.code === 'EV409' || error?.code === '23505') throw new WrongExpectedRevisionError(streamId, expected);
      throw error;
    }
  }

  /**
   * One NOTIFY after the commit, never inside the append's transaction (migration 0005),
   * and at most one on its way: appends committing meanwhile share the next one.
   */
  private tellOtherInstances(): void {
    // PGlite's files belong to this one process: there is nobody else to tell.
    if (this.db.kind === 'pglite') return;
    if (this.notifying !== 'no') {
      this.notifying = 'again';
      return;
    }
    this.notifying = 'yes';
    void this.db
      .query(`SELECT pg_notify('events_appended', $1)`, [this.instance])
      .catch(() => undefined)
      .finally(() => {
        const again = this.notifying === 'again';
        this.notifying = 'no';
        if (again) this.tellOtherInstances();
      });
  }

  async readStream(streamId: string): Promise<RecordedEvent[]> {
    const { rows } = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 ORDER BY stream_revision`,
      [streamId],
    );
    return rows.map(toRecorded);
  }

  private async horizon(q: Queryable = this.db): Promise<Horizon> {
    const { rows } = await q.query<{ horizon: string; appending: boolean }>('SELECT horizon::text, appending FROM events_horizon()');
    return rows[0];
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.readBatch(options.after, options.limit, options.within)).events;
  }

  private async readBatch(after: Position, limit: number, q: Queryable = this.db): Promise<{ events: RecordedEvent[]; appending: boolean }> {
    const { horizon, appending } = await this.horizon(q);
    const { commit, prepare } = parsePosition(after);
    const { rows } = await q.query<EventRow>(
      `SELECT ${COLUMNS} FROM events
        WHERE transaction_id < $1::text::xid8 AND (transaction_id, global_position) > ($2::text::xid8, $3::bigint)
        ORDER BY transaction_id, global_position
        LIMIT $4`,
      [horizon, commit.toString(), prepare.toString(), limit],
    );
    return { events: rows.map(toRecorded), appending };
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

  async countAfter(position: Position): Promise<number> {
    const { horizon } = await this.horizon();
    const { commit, prepare } = parsePosition(position);
    const { rows } = await this.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM events
        WHERE transaction_id < $1::text::xid8 AND (transaction_id, global_position) > ($2::text::xid8, $3::bigint)`,
      [horizon, commit.toString(), prepare.toString()],
    );
    return Number(rows[0].n);
  }

  /** Resolves at the next append notification, or after the polling fallback. */
  waitForAppend(maxMs = POLL_FALLBACK_MS): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      this.wakers.add(done);
    });
  }

  subscribeToAll(after: Position, onBatch: BatchHandler, options: SubscribeOptions = {}): Subscription {
    let stopped = false;
    let position = after;
    const batchSize = options.batchSize ?? 500;
    const loop = (async () => {
      while (!stopped) {
        try {
          const seen = this.appendSeq;
          const { events: batch, appending } = await this.readBatch(position, batchSize);
          if (stopped) break;
          if (batch.length > 0) {
            const last = batch[batch.length - 1].position;
            position = (await onBatch(batch)) ?? last;
            // A handler that resumes elsewhere (a failure, a moved checkpoint) is not caught up.
            if (position !== last) continue;
          }
          if (stopped || batch.length === batchSize) continue;
          await options.onCaughtUp?.();
          if (batch.length === 0 && this.appendSeq === seen) await this.waitForAppend(appending ? HELD_REPOLL_MS : POLL_FALLBACK_MS);
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

  async close(): Promise<void> {
    this.wake();
    await this.unlisten?.().catch(() => undefined);
  }
}
