import type { OperatorCreated, OperatorRevoked } from '../src/operators/events';
import { OPERATORS_READ_MODEL } from '../src/operators/operator-queries';
import type { Projection } from '../src/projection-runner/projection';

/** operators: the named operators and their token hashes, read by every operator request and `svc operators list`. */
export const operatorsProjection: Projection = {
  name: OPERATORS_READ_MODEL,
  version: 1,
  tables: ['operators'],
  schema: `
    CREATE TABLE IF NOT EXISTS operators (
      name        text PRIMARY KEY,
      role        text NOT NULL,
      token_hash  text NOT NULL,
      created_at  timestamptz NOT NULL,
      revoked_at  timestamptz
    );
    CREATE UNIQUE INDEX IF NOT EXISTS operators_by_token ON operators (token_hash);`,
  handles: ['OperatorCreated', 'OperatorRevoked'],
  whenFailing: 'stop', // never skip a revocation: a revoked token must not keep working
  async apply(tx, event) {
    if (event.type === 'OperatorCreated') {
      const e = event.data as OperatorCreated;
      // A name given a new token after a revocation: the row is the newest token's.
      await tx.query(
        `INSERT INTO operators (name, role, token_hash, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET role = EXCLUDED.role, token_hash = EXCLUDED.token_hash, created_at = EXCLUDED.created_at, revoked_at = NULL
         WHERE operators.created_at < EXCLUDED.created_at`,
        [e.name, e.role, e.token_hash, e.created_at],
      );
    } else {
      const e = event.data as OperatorRevoked;
      await tx.query('UPDATE operators SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL AND created_at <= $2', [e.name, e.revoked_at]);
    }
  },
};
