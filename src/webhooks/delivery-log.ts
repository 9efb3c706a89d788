import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import { publicEventId } from './public-events';

export interface DeliveryLogEntry {
  id: string;
  object: 'webhook_delivery';
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  response_status: number | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

export function toEntry(row: any): DeliveryLogEntry {
  return {
    id: row.id,
    object: 'webhook_delivery',
    event_id: publicEventId(String(row.event_id)),
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    error: row.error,
    next_attempt_at: iso(row.next_attempt_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

/** The delivery log of one endpoint, newest first; the caller has already checked ownership. */
@Injectable()
export class DeliveryLog {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async list(endpointId: string, limit: number, cursor?: string): Promise<Page<DeliveryLogEntry>> {
    if (cursor) {
      const { rows } = await this.db.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [cursor, endpointId]);
      if (!rows.length) throw invalidCursor();
    }
    // The cursor's sort key is read in SQL: a JS Date would drop the microseconds.
    const { rows } = await this.db.query(
      `SELECT * FROM webhook_deliveries
        WHERE endpoint_id = $1
          AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = $2))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [endpointId, cursor ?? null, limit + 1],
    );
    return toPage(rows, limit, toEntry);
  }
}
