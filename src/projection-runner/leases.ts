import { randomUUID } from 'node:crypto';
import type { Queryable } from '../database/database';

/**
 * One leader per consumer: a row in consumer_leases names the instance that runs it until
 * expires_at. The leader renews its leases well before they expire; when it dies, another
 * instance takes a lease over once it has expired. Leases keep the work on one instance;
 * correctness never rests on them (every batch compares-and-sets its checkpoint).
 */
export class Leases {
  /** Names this instance in consumer_leases (and `svc projections status`). */
  readonly owner: string;

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs: number,
    label: string,
  ) {
    this.owner = `${label}:${randomUUID().slice(0, 8)}`;
  }

  /** Takes the lease when it is free, expired or already ours. */
  async tryAcquire(name: string): Promise<boolean> {
    const { rows } = await this.db.query<{ owner: string }>(
      `INSERT INTO consumer_leases AS l (name, owner, expires_at)
       VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
       ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
         WHERE l.owner = EXCLUDED.owner OR l.expires_at < clock_timestamp()
       RETURNING owner`,
      [name, this.owner, this.ttlMs],
    );
    return rows.length === 1;
  }

  /** Extends the named leases; resolves to the names still held (nobody took them over). */
  async renew(names: string[]): Promise<Set<string>> {
    if (!names.length) return new Set();
    const { rows } = await this.db.query<{ name: string }>(
      `UPDATE consumer_leases SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
        WHERE owner = $1 AND name = ANY($2::text[])
        RETURNING name`,
      [this.owner, names, this.ttlMs],
    );
    return new Set(rows.map((r) => r.name));
  }

  /** Gives leases up at once (a clean shutdown), so another instance need not wait for expiry. */
  async release(names: string[]): Promise<void> {
    if (!names.length) return;
    await this.db.query('DELETE FROM consumer_leases WHERE owner = $1 AND name = ANY($2::text[])', [this.owner, names]);
  }
}
