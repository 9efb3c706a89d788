import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database, isTableNotServedYet } from '../database/database';
import type { Mode } from '../platform/mode';
import { inMode, Owner, ownedBy } from '../platform/owner-scope';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import { CreatedBound, createdSql } from '../platform/created-range';
import type { PublicEventType } from './public-events';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const PUBLIC_EVENTS_READ_MODEL = 'public_events';

export interface EventView {
  id: string;
  object: 'event';
  type: PublicEventType;
  created: number;
  data: Record<string, unknown>;
}

export interface EventFilter {
  types?: readonly PublicEventType[];
  created?: readonly CreatedBound[];
  limit: number;
  cursor?: string;
}

/** The webhook envelope as stored (the bytes every delivery posts), with the list items' `object`. */
function toEventView(row: { payload: string }): EventView {
  const { id, type, created, data } = JSON.parse(row.payload);
  return { id, object: 'event', type, created, data };
}

/** Reads of public_events, always scoped to the caller's account and mode. */
@Injectable()
export class EventQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async find(owner: Owner, id: string): Promise<EventView | undefined> {
    const s = ownedBy(owner);
    const { rows } = await this.db.query<{ payload: string }>(`SELECT payload FROM public_events WHERE ${s.where()} AND id = ${s.param(id)}`, s.params);
    return rows[0] && toEventView(rows[0]);
  }

  /** Newest first, as Stripe lists events; the cursor is the last item's id. */
  async list(owner: Owner, filter: EventFilter): Promise<Page<EventView>> {
    const s = ownedBy(owner);
    const where = [s.where()];
    if (filter.cursor) {
      const c = ownedBy(owner);
      const { rows } = await this.db.query<{ position: string }>(`SELECT position FROM public_events WHERE ${c.where()} AND id = ${c.param(filter.cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      where.push(`position < ${s.param(rows[0].position)}`);
    }
    if (filter.types) where.push(`type = ANY(${s.param(filter.types)}::text[])`);
    where.push(...createdSql(filter.created ?? [], 'created', (v) => s.param(v)));
    const { rows } = await this.db.query<{ id: string; payload: string }>(
      `SELECT id, payload FROM public_events WHERE ${where.join(' AND ')}
        ORDER BY position DESC LIMIT ${s.param(filter.limit + 1)}`,
      s.params,
    );
    return toPage(rows, filter.limit, toEventView);
  }

  /**
   * Every account's public events in a mode since the start of a minute, counted per minute
   * and type (the console's overview): read from the counts the projection keeps as it
   * inserts (public_events_per_minute), not counted from the events.
   */
  async perMinute(mode: Mode, since: Date): Promise<{ minute: Date; type: PublicEventType; events: number }[]> {
    const s = inMode(mode);
    const sql = `SELECT minute, type, events FROM public_events_per_minute
        WHERE ${s.where()} AND minute >= ${s.param(since.toISOString())} ORDER BY minute, type`;
    const { rows } = await this.db.query<{ minute: Date | string; type: PublicEventType; events: string }>(sql, s.params).catch((error) => {
      // A build of version 1 still serves (this version's is catching up, rolling deploy or
      // first start after the upgrade): it has no counts; count the events as it did.
      if (!isTableNotServedYet(error)) throw error;
      const f = inMode(mode);
      return this.db.query<{ minute: Date | string; type: PublicEventType; events: string }>(
        `SELECT date_trunc('minute', created) AS minute, type, count(*) AS events FROM public_events
          WHERE ${f.where()} AND created >= ${f.param(since.toISOString())} GROUP BY 1, 2 ORDER BY 1, 2`,
        f.params,
      );
    });
    return rows.map((r) => ({ minute: new Date(r.minute), type: r.type, events: Number(r.events) }));
  }
}
