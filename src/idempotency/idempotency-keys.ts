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
 * Takes the keys of a batch of requests, or answers what each holds, in one statement: the
 * insert takes a new key, or one whose request died with its instance (lease passed, no
 * answer), or one older than KEPT_HOURS; else the row is read as it stood when the statement
 * began. A row committed by a concurrent request after that is not seen: null, "in use" (its
 * request started a moment ago). Keys are taken in (scope, key) order, so two instances'
 * batches wait on each other in one order, never in a cycle.
 *
 * Committed without waiting for the WAL flush (`synchronous_commit` off for this transaction
 * alone, set inside the statement): a key taken is bookkeeping of a request that has not done
 * anything yet. Lost in a Postgres crash, it only makes the key retryable, which is what the
 * crash did to the request anyway; and the first synchronous commit after it (the handler's
 * own write, or the answer kept) flushes it with everything before it in the WAL.
 */
const CLAIM = `
WITH input AS MATERIALIZED (
  SELECT i.*, set_config('synchronous_commit', 'off', true) AS async
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS i(scope, key, path, body_sha256, owner, n)
), taken AS (
  INSERT INTO idempotency_keys AS k (scope, key, path, body_sha256, owner, locked_until)
  SELECT scope, key, path, body_sha256, owner, clock_timestamp() + $6 * interval '1 millisecond' FROM input ORDER BY scope, key
  ON CONFLICT (scope, key) DO UPDATE
    SET path = EXCLUDED.path, body_sha256 = EXCLUDED.body_sha256, owner = EXCLUDED.owner,
        locked_until = EXCLUDED.locked_until, status = NULL, content_type = NULL, body = NULL, created_at = now()
    WHERE (k.status IS NULL AND k.locked_until < clock_timestamp()) OR k.created_at < now() - interval '${KEPT_HOURS} hours'
  RETURNING k.scope, k.key
)
SELECT i.n, t.key IS NOT NULL AS claimed, h.path, h.body_sha256, h.status, h.content_type, h.body
  FROM input i
  LEFT JOIN taken t ON t.scope = i.scope AND t.key = i.key
  LEFT JOIN idempotency_keys h ON t.key IS NULL AND h.scope = i.scope AND h.key = i.key
 ORDER BY i.n`;

interface ClaimRow {
  claimed: boolean;
  path: string | null;
  body_sha256: string | null;
  status: number | null;
  content_type: string | null;
  body: string | null;
}

/**
 * Keeps the answers of a batch of requests (status set) and lets the keys of others go (status
 * null: a 5xx, a stream), in one statement, each only while its request still holds its key
 * (its owner token). A synchronous commit: the answer must be durable before it is sent.
 */
const SETTLE = `
WITH input AS MATERIALIZED (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[]) AS i(scope, key, owner, status, content_type, body)
), answered AS (
  UPDATE idempotency_keys k SET status = i.status, content_type = i.content_type, body = i.body, owner = NULL, locked_until = NULL
    FROM input i WHERE i.status IS NOT NULL AND k.scope = i.scope AND k.key = i.key AND k.owner = i.owner
  RETURNING k.scope, k.key
), released AS (
  DELETE FROM idempotency_keys k USING input i WHERE i.status IS NULL AND k.scope = i.scope AND k.key = i.key AND k.owner = i.owner
  RETURNING k.scope, k.key
)
SELECT scope, key FROM answered UNION ALL SELECT scope, key FROM released`;

interface Settlement {
  request: KeyedRequest;
  owner: string;
  /** Null: let the key go. */
  answer: { status: number; contentType: string | null; sealedBody: string } | null;
}

/**
 * Runs what concurrent requests submit in batches, one statement in flight at a time: the
 * first request runs at once, alone; those arriving while its statement runs go together in
 * the next. Under load a key costs a fraction of a statement (and of a commit) per request;
 * alone, one. A batch holds one item per (scope, key): a second item for the same key waits
 * for the next batch (one statement may not take or change a row twice).
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (out: O) => void; reject: (error: unknown) => void }[] = [];
  private busy = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly keyOf: (item: I) => string,
    private readonly max = 200,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length) {
        const batch: typeof this.queue = [];
        const later: typeof this.queue = [];
        const keys = new Set<string>();
        for (const entry of this.queue) {
          const key = this.keyOf(entry.item);
          if (batch.length >= this.max || keys.has(key)) later.push(entry);
          else {
            keys.add(key);
            batch.push(entry);
          }
        }
        this.queue = later;
        try {
          const outs = await this.run(batch.map((entry) => entry.item));
          batch.forEach((entry, i) => entry.resolve(outs[i]));
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.busy = false;
    }
  }
}

const keyOf = (request: KeyedRequest) => `${request.scope}\n${request.key}`;

/**
 * The idempotency_keys table: a key taken, and its answer kept or the key let go, each in a
 * statement shared by the requests of the moment (Batcher); one statement per lease period
 * for every key this instance is running.
 */
export class IdempotencyKeys {
  private readonly claims: Batcher<{ request: KeyedRequest; owner: string }, Claim>;
  private readonly settlements: Batcher<Settlement, boolean>;

  constructor(
    private readonly db: Queryable,
    /** How long an instance answers for a key it runs before renewing (CONSUMER_LEASE_TTL_MS). */
    readonly leaseMs: number,
    /** Told of each batch statement and how many requests it served (the metrics). */
    private readonly counted: (kind: 'take' | 'keep', requests: number) => void = () => undefined,
  ) {
    this.claims = new Batcher((items) => this.claimAll(items), (item) => keyOf(item.request));
    this.settlements = new Batcher((items) => this.settleAll(items), (item) => keyOf(item.request));
  }

  claim(request: KeyedRequest, owner: string): Promise<Claim> {
    return this.claims.submit({ request, owner });
  }

  /** Keeps the answer; false when the key is no longer this request's (its lease passed and another took it). */
  answer(request: KeyedRequest, owner: string, status: number, contentType: string | null, sealedBody: string): Promise<boolean> {
    return this.settlements.submit({ request, owner, answer: { status, contentType, sealedBody } });
  }

  /** Lets the key go without an answer (a 5xx, a streamed answer): the retry runs again. */
  async release(request: KeyedRequest, owner: string): Promise<void> {
    await this.settlements.submit({ request, owner, answer: null });
  }

  private async claimAll(items: { request: KeyedRequest; owner: string }[]): Promise<Claim[]> {
    const column = (f: (item: { request: KeyedRequest; owner: string }) => string) => items.map(f);
    this.counted('take', items.length);
    const { rows } = await this.db.query<ClaimRow>(CLAIM, [
      column((i) => i.request.scope),
      column((i) => i.request.key),
      column((i) => i.request.path),
      column((i) => i.request.bodySha256),
      column((i) => i.owner),
      this.leaseMs,
    ], { prepared: 'idempotency_keys_claim' });
    return rows.map((row): Claim => {
      if (row.claimed) return { claimed: true };
      if (row.path === null) return { claimed: false, held: null };
      const answer = row.status === null ? null : { status: row.status, contentType: row.content_type, sealedBody: row.body ?? '' };
      return { claimed: false, held: { path: row.path, bodySha256: row.body_sha256!, answer } };
    });
  }

  private async settleAll(items: Settlement[]): Promise<boolean[]> {
    this.counted('keep', items.length);
    const { rows } = await this.db.query<{ scope: string; key: string }>(SETTLE, [
      items.map((i) => i.request.scope),
      items.map((i) => i.request.key),
      items.map((i) => i.owner),
      items.map((i) => i.answer?.status ?? null),
      items.map((i) => i.answer?.contentType ?? null),
      items.map((i) => i.answer?.sealedBody ?? null),
    ], { prepared: 'idempotency_keys_settle' });
    const settled = new Set(rows.map((row) => `${row.scope}\n${row.key}`));
    return items.map((item) => settled.has(keyOf(item.request)));
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
