import { Database, isTableNotServedYet } from '../database/database';

/** The read model counting the log's events per minute (projections/events-per-minute.projection.ts). */
export const EVENTS_PER_MINUTE_READ_MODEL = 'events_per_minute';

export interface AppendMinute {
  minute: Date;
  events: number;
}

/**
 * Events appended to the log per minute since the start of a minute, oldest first, every
 * stream and both modes; a minute nothing was appended in is missing. Empty while the read
 * model is first built (nothing serves it yet).
 */
export async function appendsPerMinute(db: Database, since: Date): Promise<AppendMinute[]> {
  try {
    const { rows } = await db.query<{ minute: Date | string; events: string }>(
      'SELECT minute, events FROM events_per_minute WHERE minute >= $1 ORDER BY minute',
      [since.toISOString()],
    );
    return rows.map((r) => ({ minute: new Date(r.minute), events: Number(r.events) }));
  } catch (error) {
    if (isTableNotServedYet(error)) return [];
    throw error;
  }
}
