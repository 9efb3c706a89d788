import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
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
  };
}

/** Reads of the purchases read model. */
@Injectable()
export class PurchaseQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /** The buyer's purchases in one mode, newest first; the cursor is a purchase id. */
  async list(mode: Mode, buyerAccountId: string, options: { limit: number; cursor?: string }): Promise<Page<Purchase>> {
    const params: unknown[] = [mode, buyerAccountId];
    let after = '';
    if (options.cursor) {
      const { rows } = await this.db.query('SELECT 1 FROM purchases WHERE id = $1 AND mode = $2 AND buyer_account_id = $3', [options.cursor, mode, buyerAccountId]);
      if (!rows.length) throw invalidCursor();
      after = `AND (created_at, id) < (SELECT created_at, id FROM purchases WHERE id = $${params.push(options.cursor)})`;
    }
    const { rows } = await this.db.query<{ id: string; purchase: Purchase }>(
      `SELECT id, purchase FROM purchases WHERE mode = $1 AND buyer_account_id = $2 ${after}
       ORDER BY created_at DESC, id DESC LIMIT $${params.push(options.limit + 1)}`,
      params,
    );
    return toPage(rows, options.limit, (r) => toPurchase(r.purchase));
  }

  /** The session of a purchase, by the purchase id. */
  async locate(purchaseId: string): Promise<PurchaseLocation | undefined> {
    const { rows } = await this.db.query<PurchaseLocation>('SELECT mode, session_id FROM purchases WHERE id = $1', [purchaseId]);
    return rows[0];
  }

  /** The session of a purchase, by the processor's payment (Stripe: the PaymentIntent). */
  async locateByPayment(mode: Mode, paymentReference: string): Promise<PurchaseLocation | undefined> {
    const { rows } = await this.db.query<PurchaseLocation>('SELECT mode, session_id FROM purchases WHERE mode = $1 AND payment_reference = $2', [mode, paymentReference]);
    return rows[0];
  }
}
