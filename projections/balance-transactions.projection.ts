import type { Queryable } from '../src/database/database';
import type { AdjustmentRecorded, DisputeClosed, DisputeOpened, PayoutPaid, PayoutsPaused, PayoutsResumed, RefundRecorded, SaleRecorded } from '../src/ledger/events';
import type { RecordedEvent } from '../src/event-store/event-store';
import type { Projection } from '../src/projection-runner/projection';
import { BALANCE_TRANSACTIONS_READ_MODEL } from '../src/ledger/ledger-queries';

/** Ledger events that add a line of their own (a lost dispute's closing adds none), applied in runs. */
const ENTRY_EVENTS = ['SaleRecorded', 'RefundRecorded', 'DisputeOpened', 'DisputeClosed', 'AdjustmentRecorded'];

/**
 * balance_transactions: every sale, refund, dispute (and its reversal), adjustment and payout of a ledger (seq = its revision in
 * the ledger stream); ledger_accounts: the summary and payouts_paused per account and mode.
 * This SQL is written independently of the decider on purpose: `svc ledger verify`
 * compares the two, so a mistake in either shows up as a difference.
 */
export const balanceTransactionsProjection: Projection = {
  name: BALANCE_TRANSACTIONS_READ_MODEL,
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
  handles: ['SaleRecorded', 'RefundRecorded', 'DisputeOpened', 'DisputeClosed', 'PayoutInitiated', 'PayoutPaid', 'PayoutFailed', 'PayoutsPaused', 'PayoutsResumed', 'AdjustmentRecorded'],
  whenFailing: 'stop', // money: a skipped sale or refund is worse than waiting
  /**
   * Runs of sales and refunds (nearly every ledger event) are applied set-based: one
   * statement inserts a run's entries and adds what was new to its accounts' summaries.
   * Payout events depend on the rows before them, so they go one at a time, in order.
   */
  async applyBatch(tx, events) {
    let run: RecordedEvent[] = [];
    for (const event of events) {
      if (ENTRY_EVENTS.includes(event.type)) {
        run.push(event);
        continue;
      }
      await applyEntries(tx, run);
      run = [];
      await balanceTransactionsProjection.apply(tx, event);
    }
    await applyEntries(tx, run);
  },
  async apply(tx, event) {
    if (ENTRY_EVENTS.includes(event.type)) return applyEntries(tx, [event]);
    const { account_id, mode } = event.data as { account_id: string; mode: string };
    await tx.query('INSERT INTO ledger_accounts (account_id, mode) VALUES ($1, $2) ON CONFLICT DO NOTHING', [account_id, mode]);
    const key = [account_id, mode];
    switch (event.type) {
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

interface EntryLine {
  transaction_id: string;
  account_id: string;
  mode: string;
  amount_cents: number;
  fee_cents: number;
  net_cents: number;
  currency: string;
  created_at: string;
  purchase_id: string | null;
  asset: { id: string; slug: string; title: string } | null;
  description: string;
}

/**
 * The line an entry event adds: a sale or refund as it states itself; a dispute withholds
 * (and its won closing releases) the net withheld, with no fee of its own.
 */
function lineOf(event: RecordedEvent): { seq: number; type: string; e: EntryLine } | undefined {
  if (event.type === 'SaleRecorded' || event.type === 'RefundRecorded') {
    return { seq: event.revision, type: event.type === 'SaleRecorded' ? 'sale' : 'refund', e: event.data as SaleRecorded | RefundRecorded };
  }
  if (event.type === 'AdjustmentRecorded') {
    // An adjusting entry on the creator's payable: its effect on the balance, no fee, no purchase.
    const a = event.data as AdjustmentRecorded;
    return { seq: event.revision, type: 'adjustment', e: { ...a, amount_cents: a.net_cents, fee_cents: 0, purchase_id: null, asset: null } };
  }
  const d = event.data as DisputeOpened | DisputeClosed;
  if (event.type === 'DisputeClosed' && (d as DisputeClosed).outcome !== 'won') return undefined;
  const net = event.type === 'DisputeOpened' ? -d.withheld_cents : d.withheld_cents;
  return { seq: event.revision, type: event.type === 'DisputeOpened' ? 'dispute' : 'dispute_reversal', e: { ...d, amount_cents: net, fee_cents: 0, net_cents: net } };
}

/**
 * Sales, refunds and disputes in one statement: entries inserted (a replayed one is skipped),
 * then only the inserted ones added to the summary of their account, created when new. The
 * same sums as apply's per-event updates: a sale adds its amount to gross, its fee to the
 * platform fee and amount minus fee to earned; a refund (negative amounts) adds its fee
 * (giving the fee back), subtracts its fee from earned and its amount from refunded; a
 * dispute and its reversal move only the balance.
 */
async function applyEntries(tx: Queryable, events: RecordedEvent[]): Promise<void> {
  const entries = events.map(lineOf).filter((line) => line !== undefined);
  if (!entries.length) return;
  const column = <T>(pick: (x: (typeof entries)[number]) => T) => entries.map(pick);
  await tx.query(
    `WITH entries AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[],
                            $9::text[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
         AS e(id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency, created_at, purchase_id, asset_id,
              asset_slug, asset_title, description)
     ), inserted AS (
       INSERT INTO balance_transactions (id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency,
         status, created_at, purchase_id, asset_id, asset_slug, asset_title, description)
       SELECT id, account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency, 'pending', created_at, purchase_id,
              asset_id, asset_slug, asset_title, description
         FROM entries ORDER BY seq
       ON CONFLICT (id) DO NOTHING
       RETURNING account_id, mode, seq, type, amount_cents, fee_cents, net_cents, currency
     ), sums AS (
       SELECT account_id, mode,
              (array_agg(currency ORDER BY seq) FILTER (WHERE type = 'sale'))[1] AS currency,
              COALESCE(sum(amount_cents) FILTER (WHERE type = 'sale'), 0) AS gross,
              COALESCE(sum(fee_cents), 0) AS fee,
              COALESCE(sum(amount_cents - fee_cents) FILTER (WHERE type = 'sale'), 0) - COALESCE(sum(fee_cents) FILTER (WHERE type = 'refund'), 0) AS earned,
              -COALESCE(sum(amount_cents) FILTER (WHERE type = 'refund'), 0) AS refunded,
              sum(net_cents) AS balance,
              count(*) FILTER (WHERE type = 'sale') AS sales,
              count(*) FILTER (WHERE type = 'refund') AS refunds
         FROM inserted GROUP BY account_id, mode
     )
     INSERT INTO ledger_accounts AS a (account_id, mode, currency, gross_cents, platform_fee_cents, earned_cents, refunded_cents,
       balance_cents, sale_count, refund_count)
     SELECT account_id, mode, currency, gross, fee, earned, refunded, balance, sales, refunds FROM sums
     ON CONFLICT (account_id, mode) DO UPDATE SET
       currency = COALESCE(a.currency, EXCLUDED.currency),
       gross_cents = a.gross_cents + EXCLUDED.gross_cents,
       platform_fee_cents = a.platform_fee_cents + EXCLUDED.platform_fee_cents,
       earned_cents = a.earned_cents + EXCLUDED.earned_cents,
       refunded_cents = a.refunded_cents + EXCLUDED.refunded_cents,
       balance_cents = a.balance_cents + EXCLUDED.balance_cents,
       sale_count = a.sale_count + EXCLUDED.sale_count,
       refund_count = a.refund_count + EXCLUDED.refund_count`,
    [
      column((x) => x.e.transaction_id),
      column((x) => x.e.account_id),
      column((x) => x.e.mode),
      column((x) => x.seq),
      column((x) => x.type),
      column((x) => x.e.amount_cents),
      column((x) => x.e.fee_cents),
      column((x) => x.e.net_cents),
      column((x) => x.e.currency),
      column((x) => x.e.created_at),
      column((x) => x.e.purchase_id),
      column((x) => x.e.asset?.id ?? null),
      column((x) => x.e.asset?.slug ?? null),
      column((x) => x.e.asset?.title ?? null),
      column((x) => x.e.description),
    ],
  );
}
