import type { PayoutsPaused } from '../src/ledger/events';
import { OPERATOR_PAUSE_REASON } from '../src/ledger/ledger.decider';
import { PAYOUT_PAUSES_READ_MODEL } from '../src/ledger/ledger-queries';
import type { Projection } from '../src/projection-runner/projection';

/**
 * payout_pauses: why a ledger's payouts are paused and since when, one row per paused
 * account and mode (issue 38, defect 1): a refused destination's `destination_refused: <code>`
 * or an operator's pause. A PayoutsResumed (an operator, or a new destination lifting a
 * refusal's pause) removes the row. GET /v1/payouts, GET /v1/balance and the console show it.
 */
export const payoutPausesProjection: Projection = {
  name: PAYOUT_PAUSES_READ_MODEL,
  version: 1,
  tables: ['payout_pauses'],
  schema: `
    CREATE TABLE IF NOT EXISTS payout_pauses (
      account_id   text NOT NULL,
      mode         text NOT NULL,
      reason       text NOT NULL,
      failure_code text,
      destination  text,
      payout_id    text,
      since        timestamptz NOT NULL,
      PRIMARY KEY (account_id, mode)
    );`,
  handles: ['PayoutsPaused', 'PayoutsResumed'],
  whenFailing: 'stop',
  async apply(tx, event) {
    const { account_id, mode } = event.data as { account_id: string; mode: string };
    if (event.type === 'PayoutsResumed') {
      await tx.query('DELETE FROM payout_pauses WHERE account_id = $1 AND mode = $2', [account_id, mode]);
      return;
    }
    const e = event.data as PayoutsPaused;
    await tx.query(
      `INSERT INTO payout_pauses (account_id, mode, reason, failure_code, destination, payout_id, since) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (account_id, mode) DO UPDATE SET reason = EXCLUDED.reason, failure_code = EXCLUDED.failure_code,
         destination = EXCLUDED.destination, payout_id = EXCLUDED.payout_id, since = EXCLUDED.since`,
      [account_id, mode, e.reason ?? OPERATOR_PAUSE_REASON, e.failure_code ?? null, e.destination ?? null, e.payout_id ?? null, e.paused_at],
    );
  },
};
