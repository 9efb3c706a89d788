import { randomUUID } from 'node:crypto';
import { START } from '../../src/event-store/event-store';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { applyCheckpointedBatch, readCheckpoint, skipBatch } from '../../src/projection-runner/checkpoint';
import { createTestDatabase, TestDatabase } from '../support/database';

describe('applyCheckpointedBatch (shared by projections and subscribers)', () => {
  let database: TestDatabase;
  let store: PostgresEventStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    store = new PostgresEventStore(database.db);
    await database.db.exec('CREATE TABLE seen (event_id text PRIMARY KEY)');
    await database.db.query('INSERT INTO projection_checkpoints (name, version, position) VALUES ($1, 1, $2)', ['c', START]);
    for (let i = 0; i < 3; i++) await store.append(`t-${randomUUID()}`, [{ type: 'T', data: {} }], 'no_stream');
  });
  afterAll(() => database.drop());

  const record = async (tx: any, events: any[]) => {
    for (const e of events) await tx.query('INSERT INTO seen (event_id) VALUES ($1)', [e.id]);
  };

  it('applies the batch and moves the checkpoint in one transaction', async () => {
    const events = await store.readAll({ after: START, limit: 10 });
    const outcome = await applyCheckpointedBatch(database.db, 'c', START, events, events[2].position, record);
    expect(outcome).toEqual({ position: events[2].position, moved: false });
    expect(await readCheckpoint(database.db, 'c')).toBe(events[2].position);
    expect((await database.db.query('SELECT count(*)::int AS n FROM seen')).rows[0].n).toBe(3);
  });

  it('applies nothing when the checkpoint moved underneath, and says where it is', async () => {
    const events = await store.readAll({ after: START, limit: 10 });
    const outcome = await applyCheckpointedBatch(database.db, 'c', START, events, events[2].position, record);
    expect(outcome).toEqual({ position: events[2].position, moved: true });
    expect((await database.db.query('SELECT count(*)::int AS n FROM seen')).rows[0].n).toBe(3);
  });

  it('rolls the writes back with the checkpoint when apply fails', async () => {
    const before = await readCheckpoint(database.db, 'c');
    await store.append(`t-${randomUUID()}`, [{ type: 'T', data: {} }], 'no_stream');
    const events = await store.readAll({ after: before!, limit: 10 });
    await expect(
      applyCheckpointedBatch(database.db, 'c', before!, events, events[events.length - 1].position, async (tx, batch) => {
        await record(tx, batch);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await readCheckpoint(database.db, 'c')).toBe(before);
    expect((await database.db.query('SELECT count(*)::int AS n FROM seen')).rows[0].n).toBe(3);
  });

  it('moves past a batch with nothing to apply in one compare-and-set, and says where it is when it moved', async () => {
    const before = await readCheckpoint(database.db, 'c');
    const { position } = await store.append(`t-${randomUUID()}`, [{ type: 'T', data: {} }], 'no_stream');
    expect(await skipBatch(database.db, 'c', before!, position)).toEqual({ position, moved: false });
    expect(await readCheckpoint(database.db, 'c')).toBe(position);
    // A stale expectation changes nothing.
    expect(await skipBatch(database.db, 'c', before!, position)).toEqual({ position, moved: true });
    expect(await readCheckpoint(database.db, 'c')).toBe(position);
  });
});
