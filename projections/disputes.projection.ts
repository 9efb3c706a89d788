import type { PurchaseDisputeClosed, PurchaseDisputed } from '../src/commerce/events';
import type { Projection } from '../src/projection-runner/projection';
import { DISPUTES_READ_MODEL } from '../src/commerce/dispute-queries';

/**
 * disputes: every dispute of a purchase's payment, open until it is won or lost, as
 * `svc disputes list` shows them and `svc disputes close` finds them.
 */
export const disputesProjection: Projection = {
  name: DISPUTES_READ_MODEL,
  version: 1,
  tables: ['disputes'],
  schema: `
    CREATE TABLE IF NOT EXISTS disputes (
      id                text PRIMARY KEY,
      mode              text NOT NULL,
      purchase_id       text NOT NULL,
      session_id        text NOT NULL,
      buyer_account_id  text NOT NULL,
      seller_account_id text NOT NULL,
      amount_cents      bigint NOT NULL,
      dispute_fee_cents bigint NOT NULL,
      currency          text NOT NULL,
      reason            text NOT NULL,
      status            text NOT NULL,
      created_at        timestamptz NOT NULL,
      closed_at         timestamptz
    );
    CREATE INDEX IF NOT EXISTS disputes_by_mode ON disputes (mode, created_at DESC, id DESC);`,
  handles: ['PurchaseDisputed', 'PurchaseDisputeClosed'],
  whenFailing: 'stop',
  async apply(tx, event) {
    if (event.type === 'PurchaseDisputed') {
      const e = event.data as PurchaseDisputed;
      await tx.query(
        `INSERT INTO disputes (id, mode, purchase_id, session_id, buyer_account_id, seller_account_id, amount_cents, dispute_fee_cents,
           currency, reason, status, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11) ON CONFLICT (id) DO NOTHING`,
        [e.dispute_id, e.mode, e.purchase_id, e.session_id, e.buyer_account_id, e.seller_account_id, e.amount_cents, e.dispute_fee_cents, e.currency, e.reason, e.disputed_at],
      );
      return;
    }
    const e = event.data as PurchaseDisputeClosed;
    await tx.query('UPDATE disputes SET status = $2, closed_at = $3 WHERE id = $1', [e.dispute_id, e.outcome, e.closed_at]);
  },
};
