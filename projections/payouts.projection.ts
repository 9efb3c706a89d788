import type { PayoutFailed, PayoutInitiated, PayoutPaid } from '../src/ledger/events';
import type { Projection } from '../src/projection-runner/projection';

/**
 * payouts: every payout of a ledger through its lifecycle, in_transit from its initiation,
 * then paid or failed (with the processor's failure code), as GET /v1/payouts lists them.
 * seq is the ledger stream revision of its first event, so the list reads in decision order.
 */
export const payoutsProjection: Projection = {
  name: 'payouts',
  version: 1,
  tables: ['payouts'],
  schema: `
    CREATE TABLE IF NOT EXISTS payouts (
      id              text PRIMARY KEY,
      account_id      text NOT NULL,
      mode            text NOT NULL,
      seq             integer NOT NULL,
      amount_cents    bigint NOT NULL,
      currency        text NOT NULL,
      status          text NOT NULL,
      created_at      timestamptz NOT NULL,
      arrival_date    timestamptz,
      failure_code    text,
      failure_message text,
      transfer_id     text,
      UNIQUE (account_id, mode, seq)
    );`,
  handles: ['PayoutInitiated', 'PayoutPaid', 'PayoutFailed'],
  whenFailing: 'stop',
  async apply(tx, event) {
    switch (event.type) {
      case 'PayoutInitiated': {
        const e = event.data as PayoutInitiated;
        await tx.query(
          `INSERT INTO payouts (id, account_id, mode, seq, amount_cents, currency, status, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, 'in_transit', $7) ON CONFLICT (id) DO NOTHING`,
          [e.payout_id, e.account_id, e.mode, event.revision, e.amount_cents, e.currency, e.created_at],
        );
        return;
      }
      case 'PayoutPaid': {
        // A payout from before payouts had two steps has no initiation: it is first seen paid.
        const e = event.data as PayoutPaid;
        await tx.query(
          `INSERT INTO payouts (id, account_id, mode, seq, amount_cents, currency, status, created_at, arrival_date, transfer_id)
           VALUES ($1, $2, $3, $4, $5, $6, 'paid', $7, $8, $9)
           ON CONFLICT (id) DO UPDATE SET status = 'paid', arrival_date = EXCLUDED.arrival_date, transfer_id = EXCLUDED.transfer_id`,
          [e.payout.id, e.account_id, e.mode, event.revision, e.payout.amount_cents, e.payout.currency, e.payout.created_at, e.payout.arrival_date, e.transfer_id ?? null],
        );
        return;
      }
      case 'PayoutFailed': {
        // Failures recorded before they carried the payout name no code: they were all refused transfers.
        const e = event.data as PayoutFailed;
        await tx.query(`UPDATE payouts SET status = 'failed', failure_code = $2, failure_message = $3 WHERE id = $1`, [
          e.payout_id,
          e.payout?.failure_code ?? 'transfer_refused',
          e.payout?.failure_message ?? e.reason,
        ]);
        return;
      }
    }
  },
};
