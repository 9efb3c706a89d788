import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { inMode, Owner, ownedBy } from '../platform/owner-scope';
import { CreatedBound, createdSql } from '../platform/created-range';
import { invalidCursor, Page, toPage } from '../platform/pagination';
import type { Purchase } from './events';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const PURCHASES_READ_MODEL = 'purchases';

/**
 * Where a purchase's facts live: its session's stream. A fixed fact, so commands may look
 * it up here; what they decide (paid, refunded, by which payment) they read from the stream.
 */
export interface PurchaseLocation {
  mode: Mode;
  session_id: string;
}

/** A listing's sales, from the purchases read model. */
export interface ListingSales {
  sales: number;
  /** Of those sales, the ones refunded or lost to a dispute. */
  reversed: number;
}

/** Fields in the documented order (jsonb keeps its own). */
function toPurchase(p: Purchase): Purchase {
  return {
    id: p.id,
    object: 'purchase',
    asset: { id: p.asset.id, slug: p.asset.slug, title: p.asset.title },
    amount_cents: p.amount_cents,
    currency: p.currency,
    status: p.status,
    checkout_session_id: p.checkout_session_id,
    created_at: p.created_at,
    // Read models built before issue 38 kept no partial refunds: a refunded purchase gave back all of it.
    amount_refunded_cents: p.amount_refunded_cents ?? (p.status === 'refunded' ? p.amount_cents : 0),
  };
}

/** Reads of the purchases read model. */
@Injectable()
export class PurchaseQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** The buyer's purchases in one mode, newest first; the cursor is a purchase id. */
  async list(buyer: Owner, options: { limit: number; cursor?: string; created?: readonly CreatedBound[] }): Promise<Page<Purchase>> {
    const s = ownedBy(buyer, 'buyer_account_id');
    let after = createdSql(options.created ?? [], 'created_at', (v) => s.param(v)).map((c) => `AND ${c} `).join('');
    if (options.cursor) {
      const c = ownedBy(buyer, 'buyer_account_id');
      const { rows } = await this.db.query(`SELECT 1 FROM purchases WHERE ${c.where()} AND id = ${c.param(options.cursor)}`, c.params);
      if (!rows.length) throw invalidCursor();
      after += `AND (created_at, id) < (SELECT created_at, id FROM purchases WHERE id = ${s.param(options.cursor)})`;
    }
    const { rows } = await this.db.query<{ id: string; purchase: Purchase }>(
      `SELECT id, purchase FROM purchases WHERE ${s.where()} ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${s.param(options.limit + 1)}`,
      s.params,
    );
    return toPage(rows, options.limit, (r) => toPurchase(r.purchase));
  }

  /**
   * How many times each of the seller's listings sold in the seller's mode, and how many of
   * those sales were refunded or lost to a dispute since; listings never sold are absent.
   */
  async salesOf(seller: Owner, listingIds: readonly string[]): Promise<Map<string, ListingSales>> {
    if (!listingIds.length) return new Map();
    const s = ownedBy(seller, 'seller_account_id');
    const { rows } = await this.db.query<{ listing_id: string; sales: string; reversed: string }>(
      `SELECT listing_id, count(*)::text AS sales, count(*) FILTER (WHERE status <> 'paid')::text AS reversed
         FROM purchases WHERE ${s.where()} AND listing_id = ANY(${s.param(listingIds)}::text[]) GROUP BY listing_id`,
      s.params,
    );
    return new Map(rows.map((r) => [r.listing_id, { sales: Number(r.sales), reversed: Number(r.reversed) }]));
  }

  /** The session of a purchase, by the purchase id. */
  async locate(purchaseId: string): Promise<PurchaseLocation | undefined> {
    const { rows } = await this.db.query<PurchaseLocation>('SELECT mode, session_id FROM purchases WHERE id = $1', [purchaseId]);
    return rows[0];
  }

  /** The session of a purchase, by the processor's payment (Stripe: the PaymentIntent). */
  async locateByPayment(mode: Mode, paymentReference: string): Promise<PurchaseLocation | undefined> {
    const s = inMode(mode);
    const { rows } = await this.db.query<PurchaseLocation>(`SELECT mode, session_id FROM purchases WHERE ${s.where()} AND payment_reference = ${s.param(paymentReference)}`, s.params);
    return rows[0];
  }
}
