import type { Queryable } from '../src/database/database';
import type { PayoutPaid, PayoutsPaused, PayoutsResumed, RefundRecorded, SaleRecorded } from '../src/ledger/events';
import type { Projection } from '../src/projection-runner/projection';

/**
 * balance_transactions: every sale, refund and payout of a ledger (seq = its revision in
 * the ledger stream); ledger_accounts: the summary and payouts_paused per account and mode.
 * This SQL is written independently of the decider on purpose: `svc ledger verify`
 * compares the two, so a mistake in either shows up as a difference.
 */
export const balanceTransactionsProjection: Projection = {
  name: 'balance_transactions',
  version: 2,
  tables: ['balance_transactions', 'ledger_accounts'],
  schema: `
    CREATE TABLE IF NOT EXISTS balance_transactions (
      id           text PRIMARY KEY,
      account_id   text NOT NULL,
      mode         text NOT NULL,
      seq          integer NOT NULL,
      type         text NOT NULL,
      amount_cents bigint NOT NULL,
      fee_cents    bigint NOT NULL,
      net_cents    bigint NOT NULL,
      currency     text NOT NULL,
      status       text NOT NULL,
      created_at   timestamptz NOT NULL,
      purchase_id  text,
      asset_id     text,
      asset_slug   text,
      asset_title  text,
      payout_id    text,
      arrival_date timestamptz,
      description  text NOT NULL,
      UNIQUE (account_id, mode, seq)
    );
    CREATE INDEX IF NOT EXISTS balance_transactions_by_type ON balance_transactions (account_id, mode, type, seq);
    CREATE TABLE IF NOT EXISTS ledger_accounts (
      account_id         text NOT NULL,
      mode               text NOT NULL,
      currency           text,
      gross_cents        bigint NOT NULL DEFAULT 0,
      platform_fee_cents bigint NOT NULL DEFAULT 0,
      earned_cents       bigint NOT NULL DEFAULT 0,
      refunded_cents     bigint NOT NULL DEFAULT 0,
      paid_out_cents     bigint NOT NULL DEFAULT 0,
      balance_cents      bigint NOT NULL DEFAULT 0,
      sale_count         integer NOT NULL DEFAULT 0,
      refund_count       integer NOT NULL DEFAULT 0,
      payouts_paused     boolean NOT NULL DEFAULT false,
      -- seq of the PayoutInitiated whose transfer is under way: its PayoutPaid settles what came before it.
      payout_in_flight_seq integer,
      PRIMARY KEY (account_id, mode)
    );`,
  handles: ['SaleRecorded', 'RefundRecorded', 'PayoutInitiated', 'PayoutPaid', 'PayoutFailed', 'PayoutsPaused', 'PayoutsResumed'],
  whenFailing: 'stop', // money: a skipped sale or refund is worse than waiting
  async apply(tx, event) {
    const { account_id, mode } = event.data as { account_id: string; mode: string };
    await tx.query('INSERT INTO ledger_accounts (account_id, mode) VALUES ($1, $2) ON CONFLICT DO NOTHING', [account_id, mode]);
    const key = [account_id, mode];
    switch (event.type) {
      case 'SaleRecorded': {
        const e = event.data as SaleRecorded;
        if (!(await insertEntry(tx, event.revision, e, 'sale'))) return;
        await tx.query(
          `UPDATE ledger_accounts SET currency = COALESCE(currency, $3),
             gross_cents = gross_cents + $4, platform_fee_cents = platform_fee_cents + $5,
             earned_cents = earned_cents + $4 - $5, balance_cents = balance_cents + $6, sale_count = sale_count + 1
           WHERE account_id = $1 AND mode = $2`,
          [...key, e.currency, e.amount_cents, e.fee_cents, e.net_cents],
        );
        return;
      }
      case 'RefundRecorded': {
        const e = event.data as RefundRecorded;
        if (!(await insertEntry(tx, event.revision, e, 'refund'))) return;
        // Refund amounts are negative: the fee goes back, the gross amount counts as refunded.
        await tx.query(
          `UPDATE ledger_accounts SET platform_fee_cents = platform_fee_cents + $3, earned_cents = earned_cents - $3,
             refunded_cents = refunded_cents - $4, balance_cents = balance_cents + $5, refund_count = refund_count + 1
           WHERE account_id = $1 AND mode = $2`,
          [...key, e.fee_cents, e.amount_cents, e.net_cents],
        );
        return;
      }
      case 'PayoutInitiated':
        // Replayed after its payout was applied (the line holds this seq), it must not open it again.
        await tx.query(
          `UPDATE ledger_accounts SET payout_in_flight_seq = $3 WHERE account_id = $1 AND mode = $2
             AND NOT EXISTS (SELECT 1 FROM balance_transactions WHERE account_id = $1 AND mode = $2 AND type = 'payout' AND seq >= $3)`,
          [...key, event.revision],
        );
        return;
      case 'PayoutFailed':
        await tx.query('UPDATE ledger_accounts SET payout_in_flight_seq = NULL WHERE account_id = $1 AND mode = $2', key);
        return;
      case 'PayoutPaid': {
        const e = event.data as PayoutPaid;
        // The payout line takes the seq of its PayoutInitiated: it settles what came before it,
        // and lists before what was recorded while its transfer was under way. (A payout from
        // before payouts had two steps has no initiation and stands at its own seq.)
        const { rows } = await tx.query<{ seq: number | null }>(
          'SELECT payout_in_flight_seq AS seq FROM ledger_accounts WHERE account_id = $1 AND mode = $2',
          key,
        );
        const seq = rows[0]?.seq ?? event.revision;
        const { rowCount } = await tx.query(
          `INSERT INTO balance_transactions (id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency,
             status, created_at, payout_id, arrival_date, description)
           VALUES ($1, $2, $3, $4, 'payout', $5, 0, $5, $6, 'paid', $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
          [e.transaction_id, ...key, seq, -e.payout.amount_cents, e.payout.currency, e.payout.created_at, e.payout.id, e.payout.arrival_date, e.description],
        );
        if (rowCount !== 1) return;
        await tx.query(
          `UPDATE balance_transactions SET status = 'paid' WHERE account_id = $1 AND mode = $2 AND status = 'pending' AND seq < $3`,
          [...key, seq],
        );
        await tx.query(
          `UPDATE ledger_accounts SET paid_out_cents = paid_out_cents + $3, balance_cents = balance_cents - $3, payout_in_flight_seq = NULL
           WHERE account_id = $1 AND mode = $2`,
          [...key, e.payout.amount_cents],
        );
        return;
      }
      case 'PayoutsPaused':
      case 'PayoutsResumed': {
        const e = event.data as PayoutsPaused | PayoutsResumed;
        await tx.query('UPDATE ledger_accounts SET payouts_paused = $3 WHERE account_id = $1 AND mode = $2', [
          e.account_id,
          e.mode,
          event.type === 'PayoutsPaused',
        ]);
        return;
      }
    }
  },
};

/** True when the row is new: a replayed event must not count twice in the summary. */
async function insertEntry(tx: Queryable, seq: number, e: SaleRecorded | RefundRecorded, type: 'sale' | 'refund'): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO balance_transactions (id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency,
       status, created_at, purchase_id, asset_id, asset_slug, asset_title, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $13, $14, $15) ON CONFLICT (id) DO NOTHING`,
    [e.transaction_id, e.account_id, e.mode, seq, type, e.amount_cents, e.fee_cents, e.net_cents, e.currency, e.created_at,
      e.purchase_id, e.asset.id, e.asset.slug, e.asset.title, e.description],
  );
  return rowCount === 1;
}
