import type { ApiKeyActivated, ApiKeyCreated, ApiKeyRevoked } from '../src/accounts/events';
import type { Projection } from '../src/projection-runner/projection';

/** api_keys: what the auth guard reads on every request (by lookup_id). */
export const apiKeysProjection: Projection = {
  name: 'api_keys',
  version: 1,
  tables: ['api_keys'],
  schema: `
    CREATE TABLE IF NOT EXISTS api_keys (
      id          text PRIMARY KEY,
      account_id  text NOT NULL,
      mode        text NOT NULL,
      tier        text NOT NULL,
      name        text NOT NULL,
      scopes      jsonb NOT NULL,
      lookup_id   text NOT NULL,
      secret_hash text NOT NULL,
      active      boolean NOT NULL,
      expires_at  timestamptz,
      revoked_at  timestamptz,
      created_at  timestamptz NOT NULL
    );
    CREATE INDEX IF NOT EXISTS api_keys_by_lookup ON api_keys (lookup_id);
    CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys (account_id, created_at);`,
  handles: ['ApiKeyCreated', 'ApiKeyRevoked', 'ApiKeyActivated'],
  whenFailing: 'stop', // never skip a revocation: a revoked key must not keep working
  async apply(tx, event) {
    if (event.type === 'ApiKeyCreated') {
      const e = event.data as ApiKeyCreated;
      await tx.query(
        `INSERT INTO api_keys (id, account_id, mode, tier, name, scopes, lookup_id, secret_hash, active, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)
         ON CONFLICT (id) DO NOTHING`,
        [e.key_id, e.account_id, e.mode, e.tier, e.name, JSON.stringify(e.scopes), e.lookup_id, e.secret_hash, e.active, e.expires_at, e.created_at],
      );
    } else if (event.type === 'ApiKeyActivated') {
      await tx.query('UPDATE api_keys SET active = true WHERE id = $1', [(event.data as ApiKeyActivated).key_id]);
    } else {
      const e = event.data as ApiKeyRevoked;
      await tx.query('UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [e.key_id, e.revoked_at]);
    }
  },
};
