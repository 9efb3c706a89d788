import type { Queryable } from '../database/database';

/** How long a key and its answer are kept (Stripe: at least 24 hours); after that the key is new again. */
export const KEPT_HOURS = 24;

/** The request a key is first used for. */
export interface KeyedRequest {
  scope: string;
  key: string;
  path: string;
  bodySha256: string;
}

/** What the key already holds when this request did not get it. */
export interface HeldKey {
  path: string;
  bodySha256: string;
  /** Null while the first request still runs. */
  answer: { status: number; contentType: string | null; sealedBody: string } | null;
}

/** `claimed`: this request runs; otherwise what the key holds, or null when a request that started a moment ago holds it. */
export type Claim = { claimed: true } | { claimed: false; held: HeldKey | null };

/**
 * Takes the key for a request, or answers what it holds, in one statement: the insert takes a
 * new key, or one whose request died with its instance (lease passed, no answer), or one
 * older than KEPT_HOURS; else the row is read as it stood when the statement began. A row
 * committed by a concurrent request after that is not seen: null, "in use" (its request
 * started a moment ago).
 */
const CLAIM = `
WITH taken AS (
  INSERT INTO idempotency_keys AS k (scope, key, path, body_sha256, owner, locked_until)
  VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond')
  ON CONFLICT (scope, key) DO UPDATE
    SET path = EXCLUDED.path, body_sha256 = EXCLUDED.body_sha256, owner = EXCLUDED.owner,
        locked_until = EXCLUDED.locked_until, status = NULL, content_type = NULL, body = NULL, created_at = now()
    WHERE (k.status IS NULL AND k.locked_until < clock_timestamp()) OR k.created_at < now() - interval '${KEPT_HOURS} hours'
  RETURNING 1
)
SELECT true AS claimed, NULL::text AS path, NULL::text AS body_sha256, NULL::integer AS status, NULL::text AS content_type, NULL::text AS body FROM taken
UNION ALL
SELECT false, path, body_sha256, status, content_type, body FROM idempotency_keys
 WHERE scope = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM taken)`;

interface ClaimRow {
  claimed: boolean;
  path: string | null;
  body_sha256: string | null;
  status: number | null;
  content_type: string | null;
  body: string | null;
}

/**
 * The idempotency_keys table: one statement to take a key (or read its answer), one to keep
 * the answer or let the key go, one per lease period for every key this instance is running.
 */
export class IdempotencyKeys {
  constructor(
    private readonly db: Queryable,
    /** How long an instance answers for a key it runs before renewing (CONSUMER_LEASE_TTL_MS). */
    readonly leaseMs: number,
  ) {}

  async claim(request: KeyedRequest, owner: string): Promise<Claim> {
    const { rows } = await this.db.query<ClaimRow>(CLAIM, [request.scope, request.key, request.path, request.bodySha256, owner, this.leaseMs]);
    const row = rows[0];
    if (row?.claimed) return { claimed: true };
    if (!row) return { claimed: false, held: null };
    const answer = row.status === null ? null : { status: row.status, contentType: row.content_type, sealedBody: row.body ?? '' };
    return { claimed: false, held: { path: row.path!, bodySha256: row.body_sha256!, answer } };
  }

  /** Keeps the answer; false when the key is no longer this request's (its lease passed and another took it). */
  async answer(request: KeyedRequest, owner: string, status: number, contentType: string | null, sealedBody: string): Promise<boolean> {
    const { rowCount } = await this.db.query(
      'UPDATE idempotency_keys SET status = $4, content_type = $5, body = $6, owner = NULL, locked_until = NULL WHERE scope = $1 AND key = $2 AND owner = $3',
      [request.scope, request.key, owner, status, contentType, sealedBody],
    );
    return rowCount === 1;
  }

  /** Lets the key go without an answer (a 5xx, a streamed answer): the retry runs again. */
  async release(request: KeyedRequest, owner: string): Promise<void> {
    await this.db.query('DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND owner = $3', [request.scope, request.key, owner]);
  }

  /** Extends the leases of the keys these requests run. */
  async renew(owners: string[]): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET locked_until = clock_timestamp() + $2 * interval '1 millisecond' WHERE owner = ANY($1::text[]) AND status IS NULL`,
      [owners, this.leaseMs],
    );
  }

  /** Deletes keys older than KEPT_HOURS whose request is not running; answers how many. */
  async sweep(): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM idempotency_keys WHERE created_at < now() - interval '${KEPT_HOURS} hours' AND (status IS NOT NULL OR locked_until < clock_timestamp())`,
    );
    return rowCount;
  }
}
