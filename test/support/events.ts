import { EVENT_STORE, EventStore, RecordedEvent, START } from '../../src/event-store/event-store';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import type { TestApp } from './app';

/** What the suites check of a recorded event. */
export interface Recorded {
  stream_id: string;
  data: any;
}

/**
 * Every recorded event of one type, in log order. On Postgres straight from the events
 * table, as the suites always read it (every committed event, not only those below the
 * readers' horizon); on EventStoreDB, where that table is empty, through the event store.
 */
export async function recordedOfType(t: TestApp, type: string): Promise<Recorded[]> {
  const store = t.app.get<EventStore>(EVENT_STORE);
  if (store instanceof PostgresEventStore) {
    const { rows } = await t.db.query<Recorded>('SELECT stream_id, data FROM events WHERE type = $1 ORDER BY global_position', [type]);
    return rows;
  }
  const found: RecordedEvent[] = [];
  for (let after = START; ; ) {
    const batch = await store.readAll({ after, limit: 1000 });
    found.push(...batch.filter((e) => e.type === type));
    if (batch.length < 1000) return found.map((e) => ({ stream_id: e.streamId, data: e.data }));
    after = batch[batch.length - 1].position;
  }
}
