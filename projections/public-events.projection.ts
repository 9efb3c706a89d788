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
  await tx.query(
    `INSERT INTO public_events (id, account_id, mode, type, created, position, payload)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::text[])
     ON CONFLICT (id) DO NOTHING`,
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
 */
export const publicEventsProjection: Projection = {
  name: PUBLIC_EVENTS_READ_MODEL,
  version: 1,
  tables: ['public_events'],
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
    CREATE INDEX IF NOT EXISTS public_events_by_mode_created ON public_events (mode, created);`,
  handles: DOMAIN_TYPES_WITH_PUBLIC_EVENTS,
  whenFailing: 'park',
  apply: (tx, event) => insert(tx, [event]),
  applyBatch: insert,
};
