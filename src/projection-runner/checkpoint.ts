import type { Database, Queryable } from '../database/database';
import { EventStore, Position, RecordedEvent, START, Subscription } from '../event-store/event-store';

/**
 * Checkpointed consumption of the event log, shared by the projection runner and the
 * subscribers (webhook fan-out). A consumer owns one row of projection_checkpoints; each
 * batch is one transaction that locks that row, applies the events and moves the row, so
 * the consumer's writes and its position commit or roll back together.
 */
export async function readCheckpoint(q: Queryable, name: string, lock = false): Promise<Position | undefined> {
  const { rows } = await q.query<{ position: string }>(
    `SELECT position FROM projection_checkpoints WHERE name = $1${lock ? ' FOR UPDATE' : ''}`,
    [name],
  );
  return rows[0]?.position;
}

/** Gives a subscriber (not a projection) its checkpoint row, at the start of the log, once. */
export async function ensureCheckpoint(db: Database, name: string): Promise<void> {
  await db.query(
    `INSERT INTO projection_checkpoints (name, version, position) VALUES ($1, 1, $2) ON CONFLICT (name) DO NOTHING`,
    [name, START],
  );
}

export type ApplyBatch = (tx: Queryable, events: RecordedEvent[]) => Promise<void>;

/**
 * Applies one batch if the checkpoint is still where this consumer left it. A checkpoint
 * that moved underneath (another instance, a rebuild) applies nothing and reports where
 * the stored checkpoint is, so the caller resumes from there.
 */
export async function applyCheckpointedBatch(
  db: Database,
  name: string,
  expected: Position,
  events: RecordedEvent[],
  apply: ApplyBatch,
): Promise<{ position: Position; moved: boolean }> {
  return db.transaction(async (tx) => {
    const stored = await readCheckpoint(tx, name, true);
    if (stored === undefined) throw new Error(`no checkpoint row for ${name}`);
    if (stored !== expected) return { position: stored, moved: true };
    await apply(tx, events);
    const last = events[events.length - 1].position;
    const { rowCount } = await tx.query(
      'UPDATE projection_checkpoints SET position = $2, updated_at = now() WHERE name = $1 AND position = $3',
      [name, last, expected],
    );
    // The row is locked, so this cannot miss; if it ever does, roll the batch back.
    if (rowCount !== 1) throw new Error(`checkpoint of ${name} moved during its batch`);
    return { position: last, moved: false };
  });
}

/**
 * Follows the event store from the consumer's stored checkpoint, one checkpointed batch
 * at a time. `before` runs outside the transaction (e.g. waiting for a read model the
 * batch reads); `onCommitted` after each batch that moved the checkpoint forward.
 */
export async function followFromCheckpoint(
  db: Database,
  store: EventStore,
  name: string,
  apply: ApplyBatch,
  options: {
    batchSize: number;
    onError: (error: unknown) => void;
    onCommitted?: () => void;
    before?: (events: RecordedEvent[]) => Promise<void>;
  },
): Promise<Subscription> {
  let expected = await readCheckpoint(db, name);
  if (expected === undefined) throw new Error(`no checkpoint row for ${name}`);
  return store.subscribeToAll(
    expected,
    async (events) => {
      await options.before?.(events);
      const outcome = await applyCheckpointedBatch(db, name, expected!, events, apply);
      expected = outcome.position;
      if (outcome.moved) return outcome.position;
      options.onCommitted?.();
    },
    { batchSize: options.batchSize, onError: options.onError },
  );
}
