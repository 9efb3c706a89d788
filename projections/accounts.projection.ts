import type { AccountCreated } from '../src/accounts/events';
import type { Projection } from '../src/projection-runner/projection';

/** accounts: one row per account, for GET /v1/me and the operator API. */
export const accountsProjection: Projection = {
  name: 'accounts',
  version: 1,
  tables: ['accounts'],
  schema: `
    CREATE TABLE IF NOT EXISTS accounts (
      id         text PRIMARY KEY,
      slug       text NOT NULL UNIQUE,
      name       text NOT NULL,
      email      text NOT NULL,
      created_at timestamptz NOT NULL
    );`,
  handles: ['AccountCreated'],
  whenFailing: 'park',
  async apply(tx, event) {
    const e = event.data as AccountCreated;
    await tx.query(
      `INSERT INTO accounts (id, slug, name, email, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO NOTHING`,
      [e.account_id, e.slug, e.name, e.email, e.created_at],
    );
  },
};
