import type { Database, Queryable } from '../database/database';
import type { Position, RecordedEvent } from '../event-store/event-store';

/** An event a consumer set aside after failing on it (its policy 'park'), with the last error. */
export interface ParkedEvent {
  consumer: string;
  event_id: string;
  position: Position;
  type: string;
  error: string;
  attempts: number;
  parked_at: string;
}

/** Sets an event aside for a consumer, in the transaction of the batch that gave up on it; parked again, it counts the attempts. */
export async function parkEvent(tx: Queryable, consumer: string, event: RecordedEvent, error: string, attempts: number): Promise<void> {
  await tx.query(
    `INSERT INTO parked_events (consumer, event_id, position, type, event, error, attempts)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
     ON CONFLICT (consumer, event_id) DO UPDATE SET error = EXCLUDED.error, attempts = parked_events.attempts + EXCLUDED.attempts`,
    [consumer, event.id, event.position, event.type, JSON.stringify(event), error, attempts],
  );
}

/** Every consumer's parked events, in log order per consumer (`svc projections parked`). */
export async function listParked(db: Database): Promise<ParkedEvent[]> {
  const { rows } = await db.query<ParkedEvent & { parked_at: Date }>(
    `SELECT consumer, event_id::text, position, type, error, attempts, parked_at FROM parked_events ORDER BY consumer, position`,
  );
  return rows.map((r) => ({ ...r, parked_at: new Date(r.parked_at).toISOString() }));
}

/**
 * Applies a consumer's parked events again (a fix deployed, a row repaired), oldest first,
 * each in its own transaction with its removal from the list; one that fails again stays,
 * with its new error and one more attempt.
 */
export async function retryParked(
  db: Database,
  consumer: string,
  apply: (tx: Queryable, events: RecordedEvent[]) => Promise<void>,
): Promise<{ retried: number; still_parked: number }> {
  const { rows } = await db.query<{ event_id: string; event: RecordedEvent & { createdAt: string } }>(
    'SELECT event_id::text, event FROM parked_events WHERE consumer = $1 ORDER BY position',
    [consumer],
  );
  let retried = 0;
  for (const row of rows) {
    const event: RecordedEvent = { ...row.event, createdAt: new Date(row.event.createdAt) };
    try {
      await db.transaction(async (tx) => {
        await apply(tx, [event]);
        await tx.query('DELETE FROM parked_events WHERE consumer = $1 AND event_id = $2', [consumer, row.event_id]);
      });
      retried++;
    } catch (error) {
      await db.query('UPDATE parked_events SET error = $3, attempts = attempts + 1 WHERE consumer = $1 AND event_id = $2', [consumer, row.event_id, (error as Error).message]);
    }
  }
  return { retried, still_parked: rows.length - retried };
}
