import type { PurchaseCompleted, PurchaseDisputeClosed, PurchasePartiallyRefunded, PurchaseRefunded } from '../src/commerce/events';
import type { Projection } from '../src/projection-runner/projection';
import { PURCHASES_READ_MODEL } from '../src/commerce/purchase-queries';

/**
 * purchases: one row per paid purchase, both modes. The catalog's entitlement check reads
 * it (a paid row entitles the buyer; refunded and disputed ones do not), GET /v1/purchases lists it, refunds find a purchase
 * by id and the Stripe webhook by its PaymentIntent (payment_reference).
 */
export const purchasesProjection: Projection = {
  name: PURCHASES_READ_MODEL,
  // 2 (issue 38): the purchase object carries amount_refunded_cents, partial refunds included.
  version: 2,
  tables: ['purchases'],
  schema: `
    CREATE TABLE IF NOT EXISTS purchases (
      id                text PRIMARY KEY,
      mode              text NOT NULL,
      buyer_account_id  text NOT NULL,
      seller_account_id text NOT NULL,
      listing_id        text NOT NULL,
      session_id        text NOT NULL UNIQUE,
      payment_reference text NOT NULL,
      status            text NOT NULL,
      purchase          jsonb NOT NULL,
      created_at        timestamptz NOT NULL,
      refunded_at       timestamptz
    );
    CREATE INDEX IF NOT EXISTS purchases_by_buyer ON purchases (mode, buyer_account_id, created_at DESC, id DESC);
    CREATE INDEX IF NOT EXISTS purchases_entitlement ON purchases (mode, buyer_account_id, listing_id) WHERE status = 'paid';
    CREATE INDEX IF NOT EXISTS purchases_by_payment ON purchases (mode, payment_reference);
    CREATE INDEX IF NOT EXISTS purchases_by_seller_listing ON purchases (mode, seller_account_id, listing_id);`,
  handles: ['PurchaseCompleted', 'PurchasePartiallyRefunded', 'PurchaseRefunded', 'PurchaseDisputeClosed'],
  whenFailing: 'stop', // money: a purchase and its refund are what buyers paid for
  async apply(tx, event) {
    if (event.type === 'PurchaseCompleted') {
      const e = event.data as PurchaseCompleted;
      await tx.query(
        `INSERT INTO purchases (id, mode, buyer_account_id, seller_account_id, listing_id, session_id, payment_reference, status, purchase, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'paid', $8::jsonb, $9) ON CONFLICT (id) DO NOTHING`,
        [e.purchase_id, e.mode, e.buyer_account_id, e.seller_account_id, e.purchase.asset.id, e.session_id, e.payment_reference, JSON.stringify({ ...e.purchase, amount_refunded_cents: 0 }), e.completed_at],
      );
    } else if (event.type === 'PurchasePartiallyRefunded') {
      const e = event.data as PurchasePartiallyRefunded;
      await tx.query(`UPDATE purchases SET purchase = jsonb_set(purchase, '{amount_refunded_cents}', to_jsonb($2::bigint)) WHERE id = $1`, [e.purchase_id, e.refunded_total_cents]);
    } else if (event.type === 'PurchaseDisputeClosed') {
      // Lost: the buyer's bank took the money back and the purchase no longer entitles. Won: nothing changes.
      const e = event.data as PurchaseDisputeClosed;
      if (e.outcome !== 'lost') return;
      await tx.query(`UPDATE purchases SET status = 'disputed', purchase = jsonb_set(purchase, '{status}', '"disputed"') WHERE id = $1`, [e.purchase_id]);
    } else {
      const e = event.data as PurchaseRefunded;
      await tx.query(
        `UPDATE purchases SET status = 'refunded', refunded_at = $2,
                purchase = jsonb_set(jsonb_set(purchase, '{status}', '"refunded"'), '{amount_refunded_cents}', purchase->'amount_cents')
         WHERE id = $1`,
        [e.purchase_id, e.refunded_at],
      );
    }
  },
};
