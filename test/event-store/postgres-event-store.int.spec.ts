import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { RecordedEvent } from '../../src/event-store/event-store';
import { createTestDatabase, onPostgresServer, TestDatabase } from '../support/database';

const event = (type = 'Happened', data: Record<string, unknown> = {}) => ({ type, data });

/**
 * What only the Postgres adapter has: horizons, in-flight appends, NOTIFY between
 * instances. The behaviour every adapter shares is in contract.ts (postgres.contract.spec.ts).
 */
describe('PostgresEventStore', () => {
  let database: TestDatabase;
  let store: PostgresEventStore;

  // One database per file (PGlite takes seconds to start); each test uses its own streams
  // and reads from the head it found at its start.
  let run = 0;
  let s: (name: string) => string;
  let head: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    store = new PostgresEventStore(database.db);
    await store.start();
  });
  beforeEach(async () => {
    const prefix = `t${++run}`;
    s = (name) => `${prefix}${name}`;
    head = await store.headPosition();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  // The "Usain Bolt" case (Emmett readMessagesBatch.int.spec.ts): an append that took its
  // transaction id first commits last. Needs two real connections, so a server.
  (onPostgresServer ? it : it.skip)('does not pass a position that a still-running append may fill', async () => {
    const slow = new Client({ connectionString: database.url });
    await slow.connect();
    try {
      await slow.query('BEGIN');
      // What append_to_stream does first, before its transaction has an id.
      await slow.query('SELECT announce_append()');
      await slow.query('SELECT pg_current_xact_id()');
      await store.append(s('fast-1'), [event('Fast')], 'no_stream');

      expect(await store.readAll({ after: head, limit: 10 })).toEqual([]);

      await slow.query(`SELECT * FROM append_to_stream($1, 'no_stream', $2::jsonb)`, [
        s('slow-1'),
        JSON.stringify([{ id: randomUUID(), type: 'Slow', data: {} }]),
      ]);
      expect(await store.readAll({ after: head, limit: 10 })).toEqual([]);
      await slow.query('COMMIT');

      const all = await store.readAll({ after: head, limit: 10 });
      // Slow took a global position after Fast, but its transaction id is older.
      expect(all.map((e) => e.type)).toEqual(['Slow', 'Fast']);
    } finally {
      await slow.end();
    }
  });

  // Appending after another write would let a reader pass the transaction's id before it
  // announced itself; the function refuses instead.
  (onPostgresServer ? it : it.skip)('refuses an append that comes after another write in its transaction', async () => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_current_xact_id()');
      await expect(
        client.query(`SELECT * FROM append_to_stream($1, 'no_stream', $2::jsonb)`, [s('late-1'), JSON.stringify([{ id: randomUUID(), type: 'Late', data: {} }])]),
      ).rejects.toThrow(/must come before any other write/);
      await client.query('ROLLBACK');
      // Two appends in one transaction are fine: the first announced it.
      await client.query('BEGIN');
      for (const name of ['twice-1', 'twice-2']) {
        await client.query(`SELECT * FROM append_to_stream($1, 'no_stream', $2::jsonb)`, [s(name), JSON.stringify([{ id: randomUUID(), type: 'Twice', data: {} }])]);
      }
      await client.query('COMMIT');
      expect((await store.readAll({ after: head, limit: 10 })).map((e) => e.type)).toEqual(['Twice', 'Twice']);
    } finally {
      await client.end();
    }
  });

  // Issue 9: only appends bound the horizon. A transaction that appends nothing, in another
  // database on the same server (another service, a pg_dump) or in this one (a report, an
  // idle-in-transaction session), must delay no reader.
  (onPostgresServer ? it : it.skip)('lets readers pass transactions that append nothing, in this database or another', async () => {
    const otherDatabase = new URL(database.url!);
    otherDatabase.pathname = '/postgres';
    const elsewhere = new Client({ connectionString: otherDatabase.toString() });
    const here = new Client({ connectionString: database.url });
    await Promise.all([elsewhere.connect(), here.connect()]);
    try {
      for (const idle of [elsewhere, here]) {
        await idle.query('BEGIN');
        await idle.query('SELECT pg_current_xact_id()');
      }
      await here.query('SELECT count(*) FROM events');
      const appended = await store.append(s('passing-1'), [event('Passing')], 'no_stream');
      expect((await store.readAll({ after: head, limit: 10 })).map((e) => e.type)).toEqual(['Passing']);
      expect(await store.headPosition()).toBe(appended.position);

      // A subscriber learns of it within milliseconds, open transactions or not.
      const next = await store.append(s('passing-2'), [event('Prompt')], 'no_stream');
      const started = Date.now();
      const got = await new Promise<RecordedEvent[]>((resolve) => {
        const sub = store.subscribeToAll(appended.position, async (batch) => {
          void sub.stop();
          resolve(batch);
        });
      });
      expect(got.map((e) => e.position)).toEqual([next.position]);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await Promise.all([elsewhere.query('ROLLBACK').then(() => elsewhere.end()), here.query('ROLLBACK').then(() => here.end())]);
    }
  });

  // An append that rolls back sends no notification; readers it held must not wait long.
  (onPostgresServer ? it : it.skip)('resumes promptly after an in-flight append rolls back', async () => {
    const aborting = new Client({ connectionString: database.url });
    await aborting.connect();
    try {
      await aborting.query('BEGIN');
      await aborting.query('SELECT announce_append()');
      await aborting.query('SELECT pg_current_xact_id()');
      const after = await store.append(s('held-1'), [event('Held')], 'no_stream');
      const received = new Promise<number>((resolve) => {
        const sub = store.subscribeToAll(head, async (batch) => {
          void sub.stop();
          resolve(Date.now());
          return batch[batch.length - 1].position;
        });
      });
      await new Promise((r) => setTimeout(r, 300));
      const rolledBackAt = Date.now();
      await aborting.query('ROLLBACK');
      const at = await received;
      expect(at).toBeGreaterThanOrEqual(rolledBackAt);
      expect(at - rolledBackAt).toBeLessThan(200);
      expect((await store.readAll({ after: head, limit: 10 })).map((e) => e.position)).toEqual([after.position]);
    } finally {
      await aborting.end();
    }
  });
  (onPostgresServer ? it : it.skip)('tells other instances of appends after they commit, sharing one NOTIFY between appends that commit together', async () => {
    const other = new Client({ connectionString: database.url });
    await other.connect();
    try {
      const heard: string[] = [];
      let readable = 0;
      other.on('notification', (n) => heard.push(n.payload ?? ''));
      await other.query('LISTEN events_appended');
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(s(`told-${i}`), [event('Told')], 'no_stream')));
      const reader = new PostgresEventStore(database.db);
      for (let i = 0; i < 200 && readable < 20; i++) {
        await new Promise((r) => setTimeout(r, 10));
        // Whatever woke another instance is readable by then.
        if (heard.length) readable = (await reader.readAll({ after: head, limit: 100 })).length;
      }
      expect(readable).toBe(20);
      expect(heard.length).toBeGreaterThanOrEqual(1);
      expect(heard.length).toBeLessThan(20);
      expect(new Set(heard).size).toBe(1);
    } finally {
      await other.end();
    }
  });
});
