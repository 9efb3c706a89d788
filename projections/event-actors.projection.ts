import type { Queryable } from '../src/database/database';
import type { RecordedEvent } from '../src/event-store/event-store';
import { EVENT_ACTORS_READ_MODEL } from '../src/ledger/event-actors';
import { JOURNAL_EVENT_TYPES } from '../src/ledger/journal';
import type { Projection } from '../src/projection-runner/projection';

/**
 * event_actors: the actor, request id and reason in each money event's metadata (stamped by
 * the event store from the request: platform/request-context.ts), for the journal's actor and
 * reason columns. Only events that carry one get a row: the journal shows the others' as null.
 */
export const eventActorsProjection: Projection = {
  name: EVENT_ACTORS_READ_MODEL,
  version: 1,
  tables: ['event_actors'],
  schema: `
    CREATE TABLE IF NOT EXISTS event_actors (
      event_id    text PRIMARY KEY,
      actor       text,
      actor_type  text,
      request_id  text,
      reason      text
    );`,
  handles: JOURNAL_EVENT_TYPES,
  whenFailing: 'park',
  apply: (tx, event) => applyActors(tx, [event]),
  applyBatch: (tx, events) => applyActors(tx, events),
};

/** One insert for a batch; an event applied again keeps its row. */
async function applyActors(tx: Queryable, events: RecordedEvent[]): Promise<void> {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const rows = events
    .map((e) => ({ event_id: e.id, actor: text(e.metadata?.actor), actor_type: text(e.metadata?.actor_type), request_id: text(e.metadata?.request_id), reason: text(e.metadata?.reason) }))
    .filter((r) => r.actor || r.reason);
  if (!rows.length) return;
  await tx.query(
    `INSERT INTO event_actors (event_id, actor, actor_type, request_id, reason)
     SELECT event_id, actor, actor_type, request_id, reason FROM jsonb_to_recordset($1::jsonb) AS r(event_id text, actor text, actor_type text, request_id text, reason text)
     ON CONFLICT (event_id) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}
