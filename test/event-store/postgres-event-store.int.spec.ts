import { Client } from 'pg';
import { randomUUID } from 'node:crypto';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { RecordedEvent, WrongExpectedRevisionError } from '../../src/event-store/event-store';
import { createTestDatabase, onPostgresServer, TestDatabase } from '../support/database';

const event = (type = 'Happened', data: Record<string, unknown> = {}) => ({ type, data });

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

  describe('append and expected revisions', () => {
    it('appends to a new stream with no_stream and reads it back in order', async () => {
      const result = await store.append(s('order-1'), [event('A', { n: 1 }), event('B', { n: 2 })], 'no_stream');
      expect(result.nextRevision).toBe(1);
      const events = await store.readStream(s('order-1'));
      expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([['A', 0, { n: 1 }], ['B', 1, { n: 2 }]]);
      expect(events[1].position).toBe(result.position);
    });

    it('rejects no_stream on an existing stream and leaves it unchanged', async () => {
      await store.append(s('order-1'), [event()], 'no_stream');
      await expect(store.append(s('order-1'), [event()], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect(await store.readStream(s('order-1'))).toHaveLength(1);
    });

    it('appends at the exact expected revision and rejects a stale one', async () => {
      const first = await store.append(s('order-1'), [event()], 'no_stream');
      await store.append(s('order-1'), [event()], first.nextRevision);
      await expect(store.append(s('order-1'), [event('Stale')], first.nextRevision)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['Happened', 'Happened']);
    });

    it('stream_exists needs the stream; any never conflicts', async () => {
      await expect(store.append(s('order-1'), [event()], 'stream_exists')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await store.append(s('order-1'), [event()], 'any');
      await store.append(s('order-1'), [event()], 'any');
      const r = await store.append(s('order-1'), [event()], 'stream_exists');
      expect(r.nextRevision).toBe(2);
    });

    it('lets exactly one of many concurrent appends at the same revision win', async () => {
      await store.append(s('order-1'), [event()], 'no_stream');
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => store.append(s('order-1'), [event('Racer')], 0)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected').every((o) => (o as PromiseRejectedResult).reason instanceof WrongExpectedRevisionError)).toBe(true);
      expect(await store.readStream(s('order-1'))).toHaveLength(2);
    });

    it('returns an empty list for a stream that does not exist', async () => {
      expect(await store.readStream(s('nothing-here'))).toEqual([]);
    });
  });

  describe('reading all', () => {
    it('reads after a position in order, in batches, and counts what is left', async () => {
      for (let i = 0; i < 5; i++) await store.append(s(`s-${i}`), [event('E', { i })], 'no_stream');
      const firstTwo = await store.readAll({ after: head, limit: 2 });
      expect(firstTwo.map((e) => e.data.i)).toEqual([0, 1]);
      const rest = await store.readAll({ after: firstTwo[1].position, limit: 100 });
      expect(rest.map((e) => e.data.i)).toEqual([2, 3, 4]);
      expect(await store.countAfter(firstTwo[1].position)).toBe(3);
      expect(await store.headPosition()).toBe(rest[2].position);
    });

    it('catches up and then follows live appends on a subscription', async () => {
      await store.append(s('s-1'), [event('Before')], 'no_stream');
      const seen: string[] = [];
      let resolveDone!: () => void;
      const done = new Promise<void>((r) => (resolveDone = r));
      const subscription = store.subscribeToAll(head, async (batch) => {
        for (const e of batch) seen.push(e.type);
        if (seen.length === 3) resolveDone();
      });
      await store.append(s('s-2'), [event('Live1')], 'no_stream');
      await store.append(s('s-3'), [event('Live2')], 'no_stream');
      await done;
      await subscription.stop();
      expect(seen).toEqual(['Before', 'Live1', 'Live2']);
    });

    it('offers a batch again when the handler fails, so nothing is skipped', async () => {
      await store.append(s('s-1'), [event('Only')], 'no_stream');
      let calls = 0;
      let resolveDone!: (e: RecordedEvent[]) => void;
      const done = new Promise<RecordedEvent[]>((r) => (resolveDone = r));
      const subscription = store.subscribeToAll(
        head,
        async (batch) => {
          calls++;
          if (calls === 1) throw new Error('handler crashed');
          resolveDone(batch);
        },
        { onError: () => undefined },
      );
      const batch = await done;
      await subscription.stop();
      expect(batch.map((e) => e.type)).toEqual(['Only']);
      expect(calls).toBe(2);
    });
  });

  // Many writers commit in an order that differs from the order they took positions in;
  // a reader running alongside must still see every event exactly once, in cursor order.
  it('never skips or repeats an event with many concurrent appenders and a concurrent reader', async () => {
    const writers = 8;
    const perWriter = 40;
    const expected = new Set<string>();
    let writing = true;
    const seen: RecordedEvent[] = [];

    const reader = (async () => {
      let after = head;
      for (;;) {
        const stillWriting = writing;
        const batch = await store.readAll({ after, limit: 37 });
        seen.push(...batch);
        if (batch.length) after = batch[batch.length - 1].position;
        else if (!stillWriting) return;
      }
    })();

    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) {
          const id = randomUUID();
          expected.add(id);
          // Half the appends contend on one shared stream, half go to the writer's own.
          const stream = s(i % 2 === 0 ? `writer-${w}` : 'shared-1');
          await store.append(stream, [{ id, type: 'Written', data: { w, i } }], 'any');
        }
      }),
    );
    writing = false;
    await reader;

    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(expected);
    for (let i = 1; i < seen.length; i++) expect(seen[i].position > seen[i - 1].position).toBe(true);
  });

  it('gives every subscription every event once, in order, when several follow the log at once', async () => {
    const expected: string[] = [];
    const received = new Map<string, string[]>();
    const follow = (name: string, batchSize: number, from = head) => {
      received.set(name, []);
      return store.subscribeToAll(from, async (batch) => {
        // A slow consumer now and then: the others move on without it.
        if (name === 'slow') await new Promise((r) => setTimeout(r, 5));
        received.get(name)!.push(...batch.map((e) => e.id));
        return batch[batch.length - 1].position;
      }, { batchSize });
    };
    const subscriptions = [follow('projection-a', 100), follow('projection-b', 100), follow('fan-out', 500), follow('slow', 7)];
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 40; i++) {
          const id = randomUUID();
          expected.push(id);
          await store.append(s(i % 3 ? `follow-${w}` : 'follow-shared'), [{ id, type: 'Followed', data: { w, i } }], 'any');
          if (i === 20 && w === 0) subscriptions.push(follow('late', 50));
        }
      }),
    );
    const everything = (await store.readAll({ after: head, limit: 1000 })).map((e) => e.id);
    expect(new Set(everything)).toEqual(new Set(expected));
    for (let i = 0; i < 500 && [...received.values()].some((ids) => ids.length < everything.length); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(subscriptions.map((sub) => sub.stop()));
    for (const [name, ids] of received) expect([name, ids]).toEqual([name, everything]);
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
