import type { Database, Queryable } from '../database/database';
import { Position, RecordedEvent, START } from '../event-store/event-store';

/**
 * Checkpointed consumption of the event log, shared by projection builds and subscribers.
 * A consumer owns one row of projection_checkpoints; each batch is one transaction that
 * locks that row, applies the events and moves the row, so the consumer's writes and its
 * position commit or roll back together.
 */
export async function readCheckpoint(q: Queryable, name: string, lock = false): Promise<Position | undefined> {
  const { rows } = await q.query<{ position: string }>(
    `SELECT position FROM projection_checkpoints WHERE name = $1${lock ? ' FOR UPDATE' : ''}`,
    [name],
  );
  return rows[0]?.position;
}

/** Gives a consumer its checkpoint row, at the start of the log, once. */
export async function ensureCheckpoint(q: Queryable, name: string, version = 1): Promise<void> {
  await q.query(
    `INSERT INTO projection_checkpoints (name, version, position) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
    [name, version, START],
  );
}

export type ApplyBatch = (tx: Queryable, events: RecordedEvent[]) => Promise<void>;

/**
 * Moves a locked checkpoint from `expected` to `to` and clears any failure it reported
 * (the consumer got past it). Zero rows changed means another writer moved it: throw, so
 * the batch's writes roll back with it.
 */
export async function moveCheckpoint(tx: Queryable, name: string, expected: Position, to: Position): Promise<void> {
  const { rowCount } = await tx.query(MOVE, [name, to, expected]);
  if (rowCount !== 1) throw new Error(`checkpoint of ${name} moved during its batch`);
}

const MOVE = `UPDATE projection_checkpoints
    SET position = $2, updated_at = now(), error = NULL, error_event_id = NULL, error_count = 0, stalled_since = NULL
  WHERE name = $1 AND position = $3`;

/**
 * Applies one batch and moves the checkpoint to `to` (the batch's last event or past it) if the
 * checkpoint is still where this consumer left it. A checkpoint
 * that moved underneath (another instance) applies nothing and reports where the stored
 * checkpoint is, so the caller resumes from there.
 */
export async function applyCheckpointedBatch(
  db: Database,
  name: string,
  expected: Position,
  events: RecordedEvent[],
  to: Position,
  apply: ApplyBatch,
): Promise<{ position: Position; moved: boolean }> {
  return db.transaction(async (tx) => {
    // The batch is derived from events already durable: a crash that loses it loses its
    // checkpoint with it, and it is applied again. So its commit need not wait for the WAL flush.
    const { rows } = await tx.query<{ position: string }>(
      `SELECT position, set_config('synchronous_commit', 'off', true) FROM projection_checkpoints WHERE name = $1 FOR UPDATE`,
      [name],
    );
    const stored = rows[0]?.position;
    if (stored === undefined) throw new Error(`no checkpoint row for ${name}`);
    if (stored !== expected) return { position: stored, moved: true };
    await apply(tx, events);
    await moveCheckpoint(tx, name, expected, to);
    return { position: to, moved: false };
  });
}

/**
 * Moves the checkpoint past a batch with nothing for this consumer, in one statement: no
 * transaction, nothing to apply. Same compare-and-set as a batch, so a checkpoint moved
 * underneath reports where it stands instead.
 */
export async function skipBatch(db: Database, name: string, expected: Position, to: Position): Promise<{ position: Position; moved: boolean }> {
  const { rowCount } = await db.query(MOVE, [name, to, expected]);
  if (rowCount === 1) return { position: to, moved: false };
  const stored = await readCheckpoint(db, name);
  if (stored === undefined) throw new Error(`no checkpoint row for ${name}`);
  return { position: stored, moved: true };
}
