import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { AuthContext } from '../platform/auth/auth-context';
import { invalidCursor, Page, toPage } from '../platform/pagination';
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
  createdGte?: Date;
  createdLt?: Date;
  limit: number;
  cursor?: string;
}

type Owner = Pick<AuthContext, 'accountId' | 'mode'>;

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
    const { rows } = await this.db.query<{ payload: string }>(
      'SELECT payload FROM public_events WHERE id = $1 AND account_id = $2 AND mode = $3',
      [id, owner.accountId, owner.mode],
    );
    return rows[0] && toEventView(rows[0]);
  }

  /** Newest first, as Stripe lists events; the cursor is the last item's id. */
  async list(owner: Owner, filter: EventFilter): Promise<Page<EventView>> {
    const params: unknown[] = [owner.accountId, owner.mode];
    const where = ['account_id = $1', 'mode = $2'];
    if (filter.cursor) {
      const { rows } = await this.db.query<{ position: string }>(
        'SELECT position FROM public_events WHERE id = $1 AND account_id = $2 AND mode = $3',
        [filter.cursor, owner.accountId, owner.mode],
      );
      if (!rows.length) throw invalidCursor();
      where.push(`position < $${params.push(rows[0].position)}`);
    }
    if (filter.types) where.push(`type = ANY($${params.push(filter.types)}::text[])`);
    if (filter.createdGte) where.push(`created >= $${params.push(filter.createdGte.toISOString())}`);
    if (filter.createdLt) where.push(`created < $${params.push(filter.createdLt.toISOString())}`);
    const { rows } = await this.db.query<{ id: string; payload: string }>(
      `SELECT id, payload FROM public_events WHERE ${where.join(' AND ')}
        ORDER BY position DESC LIMIT $${params.push(filter.limit + 1)}`,
      params,
    );
    return toPage(rows, filter.limit, toEventView);
  }
}
