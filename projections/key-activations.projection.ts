import type { ApiKeyActivationOpened } from '../src/accounts/events';
import { KEY_ACTIVATIONS_READ_MODEL } from '../src/accounts/account-queries';
import type { Projection } from '../src/projection-runner/projection';

/** key_activations: the latest activation checkout of each live premium key, as `svc keys list` shows it until it lapses. */
export const keyActivationsProjection: Projection = {
  name: KEY_ACTIVATIONS_READ_MODEL,
  version: 1,
  tables: ['key_activations'],
  schema: `
    CREATE TABLE IF NOT EXISTS key_activations (
      key_id              text PRIMARY KEY,
      checkout_session_id text NOT NULL,
      checkout_url        text NOT NULL,
      expires_at          timestamptz NOT NULL,
      opened_at           timestamptz NOT NULL
    );`,
  handles: ['ApiKeyActivationOpened'],
  whenFailing: 'park',
  async apply(tx, event) {
    const e = event.data as ApiKeyActivationOpened;
    await tx.query(
      `INSERT INTO key_activations (key_id, checkout_session_id, checkout_url, expires_at, opened_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key_id) DO UPDATE SET checkout_session_id = EXCLUDED.checkout_session_id, checkout_url = EXCLUDED.checkout_url,
         expires_at = EXCLUDED.expires_at, opened_at = EXCLUDED.opened_at
       WHERE key_activations.opened_at <= EXCLUDED.opened_at`,
      [e.key_id, e.checkout_session_id, e.checkout_url, e.expires_at, e.opened_at],
    );
  },
};
