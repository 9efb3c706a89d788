import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { inMode } from '../platform/owner-scope';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { PurchaseLocation } from './purchase-queries';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const DISPUTES_READ_MODEL = 'disputes';

/** A dispute as `svc disputes list` shows it (Stripe's dispute object, in cents). */
export interface Dispute {
  id: string;
  object: 'dispute';
  mode: Mode;
  purchase_id: string;
  seller_account_id: string;
  amount_cents: number;
  /** What the processor charged for the dispute: the platform's cost, whatever the outcome. */
  dispute_fee_cents: number;
  currency: string;
  reason: string;
  status: 'open' | 'won' | 'lost';
  created_at: string;
  closed_at: string | null;
}

function toDispute(row: any): Dispute {
  return {
    id: row.id,
    object: 'dispute',
    mode: row.mode,
    purchase_id: row.purchase_id,
    seller_account_id: row.seller_account_id,
    amount_cents: Number(row.amount_cents),
    dispute_fee_cents: Number(row.dispute_fee_cents),
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    closed_at: row.closed_at ? new Date(row.closed_at).toISOString() : null,
  };
}

/** The disputes read model: the operator's list, and where a dispute's facts live. */
@Injectable()
export class DisputeQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** Disputes of one mode, newest first, optionally of one status; the cursor is a dispute id. */
  async list(mode: Mode, options: { status?: Dispute['status']; limit: number; cursor?: string }): Promise<Page<Dispute>> {
    const s = inMode(mode);
    const status = s.param(options.status ?? null);
    let after = '';
    if (options.cursor) {
      const c = inMode(mode);
      const { rows } = await this.db.query(`SELECT 1 FROM disputes WHERE ${c.where()} AND id = ${c.param(options.cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      after = `AND (created_at, id) < (SELECT created_at, id FROM disputes WHERE id = ${s.param(options.cursor)})`;
    }
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT * FROM disputes WHERE ${s.where()} AND (${status}::text IS NULL OR status = ${status}) ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${s.param(options.limit + 1)}`,
      s.params,
    );
    return toPage(rows, options.limit, toDispute);
  }

  async find(disputeId: string): Promise<Dispute | undefined> {
    const { rows } = await this.db.query('SELECT * FROM disputes WHERE id = $1', [disputeId]);
    return rows[0] && toDispute(rows[0]);
  }

  /** The session of a disputed purchase, by the dispute's id. */
  async locate(disputeId: string): Promise<PurchaseLocation | undefined> {
    const { rows } = await this.db.query<PurchaseLocation>('SELECT mode, session_id FROM disputes WHERE id = $1', [disputeId]);
    return rows[0];
  }
}
