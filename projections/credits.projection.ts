import type { CreditsGranted } from '../src/accounts/events';
import type { CreditsRefunded, CreditsSpent } from '../src/factory/events';
import type { Projection } from '../src/projection-runner/projection';

/** credit_balances: generation credits per account and mode. */
export const creditsProjection: Projection = {
  name: 'credit_balances',
  version: 1,
  tables: ['credit_balances'],
  schema: `
    CREATE TABLE IF NOT EXISTS credit_balances (
      account_id text NOT NULL,
      mode       text NOT NULL,
      credits    integer NOT NULL,
      PRIMARY KEY (account_id, mode)
    );`,
  // Spends and refunds (src/factory/credits.ts) carry the balance after them, like grants.
  handles: ['CreditsGranted', 'CreditsSpent', 'CreditsRefunded'],
  whenFailing: 'stop', // money: credits are bought and spent
  async apply(tx, event) {
    const e = event.data as CreditsGranted | CreditsSpent | CreditsRefunded;
    // The event carries the resulting balance, so applying it is idempotent.
    await tx.query(
      `INSERT INTO credit_balances (account_id, mode, credits) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, mode) DO UPDATE SET credits = EXCLUDED.credits`,
      [e.account_id, e.mode, e.credits],
    );
  },
};
