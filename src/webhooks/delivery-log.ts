import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { filteredBy, inMode } from '../platform/owner-scope';
import { CreatedBound, createdSql } from '../platform/created-range';
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

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** Deliveries in a status are counted up to this many (the console shows "10,000+"). */
export const STATUS_COUNT_CAP = 10_000;

/** A delivery as an operator sees it: whose it is, where it goes, and the domain event's own id. */
export interface OperatorDelivery extends DeliveryLogEntry {
  endpoint_id: string;
  account_id: string;
  mode: Mode;
  /** The domain event's id in the event store (event_id is its public evt_ form). */
  store_event_id: string;
  url: string | null;
  payload: string;
}

export interface DeliveryAttempt {
  attempt: number;
  response_status: number | null;
  error: string | null;
  response_body: string | null;
  started_at: string;
  /** null: the attempt is under way, or was interrupted (the worker stopped). */
  finished_at: string | null;
}

function toOperatorDelivery(row: any): OperatorDelivery {
  return { ...toEntry(row), endpoint_id: row.endpoint_id, account_id: row.account_id, mode: row.mode, store_event_id: String(row.event_id), url: row.url ?? null, payload: row.payload };
}

/** The delivery log of one endpoint, newest first; the caller has already checked ownership. */
@Injectable()
export class DeliveryLog {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async list(endpointId: string, limit: number, cursor?: string, created: readonly CreatedBound[] = []): Promise<Page<DeliveryLogEntry>> {
    if (cursor) {
      const { rows } = await this.db.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [cursor, endpointId]);
      if (!rows.length) throw invalidCursor();
    }
    const values: unknown[] = [endpointId, cursor ?? null, limit + 1];
    const range = createdSql(created, 'created_at', (v) => `$${values.push(v)}`).map((c) => `AND ${c}`).join(' ');
    // The cursor's sort key is read in SQL: a JS Date would drop the microseconds.
    const { rows } = await this.db.query(
      `SELECT * FROM webhook_deliveries
        WHERE endpoint_id = $1 ${range}
          AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = $2))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      values,
    );
    return toPage(rows, limit, toEntry);
  }

  /**
   * Operators (the console): one mode's deliveries, of one account and/or one status when
   * given, newest first. Each statement's tenant predicate comes from the owner scope.
   */
  async recent(filter: { mode: Mode; accountId?: string; status?: DeliveryStatus }, limit: number, cursor?: string): Promise<Page<OperatorDelivery>> {
    const s = filteredBy({ mode: filter.mode, accountId: filter.accountId });
    const where = [s.where('d')];
    if (filter.status) where.push(`d.status = ${s.param(filter.status)}`);
    if (cursor) {
      const c = inMode(filter.mode);
      const { rows } = await this.db.query(`SELECT 1 FROM webhook_deliveries WHERE ${c.where()} AND id = ${c.param(cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      const at = s.param(cursor);
      where.push(`(d.created_at, d.id) < (SELECT created_at, id FROM webhook_deliveries WHERE id = ${at})`);
    }
    const { rows } = await this.db.query(
      `SELECT d.*, e.url FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE ${where.join(' AND ')} ORDER BY d.created_at DESC, d.id DESC LIMIT ${s.param(limit + 1)}`,
      s.params,
    );
    return toPage(rows, limit, toOperatorDelivery);
  }

  /**
   * How many of one mode's deliveries (of one account when given) are in each status, each
   * counted up to `cap`: cap + 1 stands for more than cap. A busy mode's succeeded deliveries
   * run to millions, and counting them all on every view of the page cost 13 ms at 100,000.
   */
  async countsByStatus(filter: { mode: Mode; accountId?: string }, cap = STATUS_COUNT_CAP): Promise<Record<DeliveryStatus, number>> {
    const s = filteredBy(filter);
    const limit = s.param(cap + 1);
    const counted = (status: DeliveryStatus) =>
      `(SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE ${s.where()} AND status = '${status}' LIMIT ${limit}) capped) AS ${status}`;
    const { rows } = await this.db.query<Record<DeliveryStatus, string>>(`SELECT ${DELIVERY_STATUSES.map(counted).join(', ')}`, s.params);
    return { pending: Number(rows[0].pending), succeeded: Number(rows[0].succeeded), failed: Number(rows[0].failed) };
  }

  /**
   * One mode's delivery attempts that finished since the start of a minute, per minute:
   * answered 2xx, or not (the overview's success rate). Read from the counts the delivery
   * worker keeps as it records outcomes (webhook_attempts_per_minute, migration 0205), not
   * counted from the attempts.
   */
  async attemptsPerMinute(mode: Mode, since: Date): Promise<{ minute: Date; succeeded: number; failed: number }[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query<{ minute: Date | string; succeeded: string; failed: string }>(
      `SELECT minute, succeeded, failed FROM webhook_attempts_per_minute
        WHERE ${s.where()} AND minute >= ${s.param(since.toISOString())} ORDER BY minute`,
      s.params,
    );
    return rows.map((r) => ({ minute: new Date(r.minute), succeeded: Number(r.succeeded), failed: Number(r.failed) }));
  }

  /** One delivery of the mode, with its attempts oldest first; undefined when the mode has none of that id. */
  async findInMode(mode: Mode, id: string): Promise<{ delivery: OperatorDelivery; attempts: DeliveryAttempt[] } | undefined> {
    const s = inMode(mode);
    const { rows } = await this.db.query(
      `SELECT d.*, e.url FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE ${s.where('d')} AND d.id = ${s.param(id)}`,
      s.params,
    );
    if (!rows.length) return undefined;
    const attempts = await this.db.query(
      'SELECT attempt, response_status, error, response_body, started_at, finished_at FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY attempt',
      [id],
    );
    return {
      delivery: toOperatorDelivery(rows[0]),
      attempts: attempts.rows.map((a: any) => ({ ...a, started_at: iso(a.started_at)!, finished_at: iso(a.finished_at) })),
    };
  }

  /** The deliveries one domain event (its event store id) made, in the mode. */
  async ofEvent(mode: Mode, storeEventId: string): Promise<OperatorDelivery[]> {
    if (!/^[0-9a-f-]{36}$/i.test(storeEventId)) return [];
    const s = inMode(mode);
    const { rows } = await this.db.query(
      `SELECT d.*, e.url FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE ${s.where('d')} AND d.event_id = ${s.param(storeEventId)}::uuid ORDER BY d.created_at, d.id`,
      s.params,
    );
    return rows.map(toOperatorDelivery);
  }
}
