import type { Queryable } from '../src/database/database';
import type { RecordedEvent } from '../src/event-store/event-store';
import type { Projection } from '../src/projection-runner/projection';
import { PUBLIC_EVENTS_READ_MODEL } from '../src/webhooks/event-queries';
import { DOMAIN_TYPES_WITH_PUBLIC_EVENTS, envelope, toPublicEvent } from '../src/webhooks/public-events';

async function insert(tx: Queryable, events: readonly RecordedEvent[]): Promise<void> {
  const rows = events.flatMap((event) => {
    const mapped = toPublicEvent(event);
    if (!mapped) return [];
    const payload = envelope(event, mapped);
    return [{ id: JSON.parse(payload).id as string, mapped, event, payload }];
  });
  if (!rows.length) return;
  // The minute counts grow by the rows this statement inserted, not by the events it was given:
  // an event applied again (a parked event retried, a replay) is counted once.
  await tx.query(
    `WITH inserted AS (
       INSERT INTO public_events (id, account_id, mode, type, created, position, payload)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
       ON CONFLICT (id) DO NOTHING
       RETURNING mode, type, created
     )
     INSERT INTO public_events_per_minute AS m (mode, minute, type, events)
     SELECT mode, date_trunc('minute', created), type, count(*) FROM inserted GROUP BY 1, 2, 3
     ON CONFLICT (mode, minute, type) DO UPDATE SET events = m.events + EXCLUDED.events`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.mapped.accountId),
      rows.map((r) => r.mapped.mode),
      rows.map((r) => r.mapped.type),
      rows.map((r) => r.event.createdAt.toISOString()),
      rows.map((r) => r.event.position),
      rows.map((r) => r.payload),
    ],
  );
}

/**
 * public_events: every public event (the webhook envelope, byte for byte, from the same
 * mapping the fan-out uses) under its receiving account and mode, for GET /v1/events. Kept
 * whether or not any endpoint subscribed, so a receiver can catch up on what it missed.
 * public_events_per_minute: how many of them each minute (of their `created`) had, per mode
 * and type, kept as they are inserted, for the console's overview (a burst of 100,000 events
 * in its hour is then 60 rows a type to read, not 100,000 to count).
 */
export const publicEventsProjection: Projection = {
  name: PUBLIC_EVENTS_READ_MODEL,
  version: 2, // 2: public_events_per_minute (issue 26)
  tables: ['public_events', 'public_events_per_minute'],
  schema: `
    CREATE TABLE IF NOT EXISTS public_events (
      id         text PRIMARY KEY,
      account_id text NOT NULL,
      mode       text NOT NULL,
      type       text NOT NULL,
      created    timestamptz NOT NULL,
      position   text NOT NULL,
      payload    text NOT NULL
    );
    CREATE INDEX IF NOT EXISTS public_events_by_owner ON public_events (account_id, mode, position);
    CREATE INDEX IF NOT EXISTS public_events_by_owner_type ON public_events (account_id, mode, type, position);
    CREATE INDEX IF NOT EXISTS public_events_by_mode_created ON public_events (mode, created);
    CREATE TABLE IF NOT EXISTS public_events_per_minute (
      mode   text NOT NULL,
      minute timestamptz NOT NULL,
      type   text NOT NULL,
      events bigint NOT NULL,
      PRIMARY KEY (mode, minute, type)
    );`,
  handles: DOMAIN_TYPES_WITH_PUBLIC_EVENTS,
  whenFailing: 'park',
  apply: (tx, event) => insert(tx, [event]),
  applyBatch: insert,
};
