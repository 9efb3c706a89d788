import type { Queryable } from '../src/database/database';
import type { RecordedEvent } from '../src/event-store/event-store';
import { EVENTS_PER_MINUTE_READ_MODEL } from '../src/projection-runner/append-rate';
import { EVERY_EVENT, Projection } from '../src/projection-runner/projection';

/**
 * events_per_minute: how many events the log took each minute (of their append time), every
 * stream and both modes, for the console's overview. One row a minute the log was written in:
 * at most 1,440 a day, so it is not pruned, and a rebuild gives the same rows.
 */
export const eventsPerMinuteProjection: Projection = {
  name: EVENTS_PER_MINUTE_READ_MODEL,
  version: 1,
  tables: ['events_per_minute'],
  schema: `
    CREATE TABLE IF NOT EXISTS events_per_minute (
      minute timestamptz PRIMARY KEY,
      events bigint NOT NULL
    );`,
  handles: EVERY_EVENT,
  whenFailing: 'park',
  apply: (tx, event) => count(tx, [event]),
  applyBatch: count,
};

/** One upsert a batch: the runner applies each event once per build, in the batch's transaction. */
async function count(tx: Queryable, events: RecordedEvent[]): Promise<void> {
  const perMinute = new Map<number, number>();
  for (const event of events) {
    const minute = Math.floor(event.createdAt.getTime() / 60_000) * 60_000;
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
  }
  if (!perMinute.size) return;
  await tx.query(
    `INSERT INTO events_per_minute AS m (minute, events)
     SELECT * FROM unnest($1::timestamptz[], $2::bigint[]) ORDER BY 1
     ON CONFLICT (minute) DO UPDATE SET events = m.events + EXCLUDED.events`,
    [[...perMinute.keys()].map((m) => new Date(m).toISOString()), [...perMinute.values()]],
  );
}
