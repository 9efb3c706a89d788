import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import type { FailurePolicy } from '../../src/projection-runner/consumer';
import { LagSample, LagSampler } from '../../src/projection-runner/lag-samples';
import { Projection } from '../../src/projection-runner/projection';
import { ProjectionRunner, RunnerOptions } from '../../src/projection-runner/projection-runner';
import { createTestDatabase, TestDatabase } from '../support/database';
import { eventually } from '../support/eventually';

/** Counts events per stream; an event of type Poison fails while `poisoned` is true, after writing its row. */
let poisoned = true;
const counting = (options: { version?: number; whenFailing?: FailurePolicy } = {}): Projection => ({
  name: 'stream_counts',
  version: options.version ?? 1,
  tables: ['stream_counts'],
  schema: 'CREATE TABLE IF NOT EXISTS stream_counts (stream_id text PRIMARY KEY, n integer NOT NULL)',
  handles: ['Counted', 'Poison'],
  whenFailing: options.whenFailing ?? 'park',
  async apply(tx, event) {
    await tx.query(
      `INSERT INTO stream_counts (stream_id, n) VALUES ($1, 1)
       ON CONFLICT (stream_id) DO UPDATE SET n = stream_counts.n + 1`,
      [event.streamId],
    );
    if (event.type === 'Poison' && poisoned) throw new Error('cannot project this event');
  },
});

const FAST: Partial<RunnerOptions> = { maxAttempts: 2, leaseTtlMs: 1000, retiredGraceMs: 0 };

describe('ProjectionRunner', () => {
  let database: TestDatabase;
  let store: PostgresEventStore;
  const runners: ProjectionRunner[] = [];

  const runner = (projection: Projection = counting(), options: Partial<RunnerOptions> = FAST) => {
    const r = new ProjectionRunner(database.db, store, [projection], options);
    runners.push(r);
    return r;
  };
  const counts = async () =>
    Object.fromEntries((await database.db.query('SELECT stream_id, n FROM stream_counts ORDER BY stream_id')).rows.map((r) => [r.stream_id, r.n]));
  const schemas = async () =>
    (await database.db.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rm_stream_counts%' ORDER BY nspname`)).rows.map((r) => r.nspname);
  beforeEach(async () => {
    poisoned = true;
    database = await createTestDatabase();
    store = new PostgresEventStore(database.db);
    await store.start();
  });
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await store.close();
    await database.drop();
  });

  it('projects every event and lets a writer wait for its position', async () => {
    const r = runner();
    await r.prepare();
    await r.start();
    await store.append('a-1', [{ type: 'Counted', data: {} }, { type: 'Ignored', data: {} }], 'no_stream');
    const last = await store.append('b-1', [{ type: 'Counted', data: {} }], 'no_stream');
    expect(await r.waitFor(last.position, { timeoutMs: 10000 })).toBe(true);
    expect(await counts()).toEqual({ 'a-1': 1, 'b-1': 1 });
    const { items } = await r.status();
    expect(items).toEqual([
      expect.objectContaining({ name: 'stream_counts', version: 1, build: 'stream_counts:v1', position: last.position, behind: false, lag_seconds: 0, parked: 0, error: null, stalled_since: null, rebuilding: null }),
    ]);
    expect(items[0].leader).toMatch(/:/);
  });

  it('keeps progress over events of no concern to it in memory for waiters, and stores it a moment later, not once per batch', async () => {
    const r = runner();
    await r.prepare();
    await r.start();
    await database.db.exec(`
      CREATE TABLE checkpoint_writes (name text NOT NULL);
      CREATE FUNCTION note_checkpoint_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO checkpoint_writes VALUES (NEW.name); RETURN NEW; END $$;
      CREATE TRIGGER noted AFTER UPDATE ON projection_checkpoints FOR EACH ROW EXECUTE FUNCTION note_checkpoint_write();`);
    let last = '';
    for (let i = 0; i < 30; i++) {
      last = (await store.append(`other-${i}`, [{ type: 'Ignored', data: {} }], 'no_stream')).position;
      expect(await r.waitFor(last, { timeoutMs: 5000 })).toBe(true);
    }
    await eventually(async () => (await r.status()).items[0].position === last, 5000, 'the stored checkpoint');
    const { rows } = await database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM checkpoint_writes WHERE name = 'stream_counts:v1'`);
    // 30 batches, one event each: every one used to rewrite the row.
    expect(rows[0].n).toBeLessThan(15);
  });

  it('reports lag as the age of the oldest event it has not read, and times out waiting while it is not running', async () => {
    const r = runner();
    await r.prepare();
    const before = Date.now();
    await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const last = await store.append('a-1', [{ type: 'Counted', data: {} }], 0);
    expect(await r.waitFor(last.position, { timeoutMs: 100 })).toBe(false);
    const { items } = await r.status();
    // The first event's age (over 0.4 s), not the newest one's.
    expect(items[0]).toMatchObject({ behind: true, leader: null });
    expect(items[0].lag_seconds).toBeGreaterThanOrEqual(0.4);
    expect(items[0].lag_seconds).toBeLessThanOrEqual((Date.now() - before) / 1000);
  });

  it('samples the lag of the read models it runs each minute, nothing while it runs none; the largest of a minute stays, a day is kept', async () => {
    const samples = async () => (await database.db.query('SELECT minute, read_model, lag_seconds FROM read_model_lag ORDER BY minute, read_model')).rows;
    const r = runner();
    await r.prepare();
    await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    // Not started (WORKERS=false): nothing runs here, so nothing is written, seen lags or not.
    await r.status();
    expect(await r.sampleLag()).toBe(0);
    expect(await samples()).toEqual([]);

    await r.start();
    const last = await store.append('a-1', [{ type: 'Counted', data: {} }], 0);
    expect(await r.waitFor(last.position, { timeoutMs: 10000 })).toBe(true);
    const now = Date.now();
    const minute = new Date(Math.floor(now / 60_000) * 60_000);
    // Another instance saw more this minute; a sample from two days ago is past keeping.
    await database.db.query(
      `INSERT INTO read_model_lag (minute, read_model, lag_seconds) VALUES ($1, 'stream_counts', 12.5), (now() - interval '2 days', 'old', 1)
       ON CONFLICT (minute, read_model) DO UPDATE SET lag_seconds = EXCLUDED.lag_seconds`, // the minute's tick may have written already
      [minute.toISOString()],
    );
    expect(await r.sampleLag(now)).toBe(1);
    expect(await samples()).toEqual([{ minute, read_model: 'stream_counts', lag_seconds: 12.5 }]);
    expect(await r.lagPerMinute(new Date(now - 3600_000))).toEqual([{ minute, lag_seconds: 12.5 }]);

    // Stopped, it writes nothing again (and its timer is gone: jest would not exit otherwise).
    await r.stop();
    await database.db.exec('DELETE FROM read_model_lag');
    expect(await r.sampleLag()).toBe(0);
    expect(await samples()).toEqual([]);
  });

  it('keeps the largest lag seen in a minute, measured or observed by a status, per read model', async () => {
    const at = Date.now() - 5 * 60_000;
    const minute = new Date(Math.floor(at / 60_000) * 60_000);
    let measured: LagSample[] | undefined = [{ read_model: 'a', lag_seconds: 1 }];
    const sampler = new LagSampler(database.db, async () => measured);
    sampler.observe([{ read_model: 'a', lag_seconds: 50 }], at); // not sampling yet: not kept
    sampler.start();
    sampler.observe([{ read_model: 'a', lag_seconds: 7 }, { read_model: 'b', lag_seconds: 2 }], at);
    sampler.observe([{ read_model: 'a', lag_seconds: 3 }], at);
    expect(await sampler.sample(at)).toBe(2);
    measured = [{ read_model: 'a', lag_seconds: 4 }, { read_model: 'b', lag_seconds: 9 }];
    expect(await sampler.sample(at)).toBe(2);
    // Nothing running: nothing written, and what was observed meanwhile is dropped.
    measured = undefined;
    sampler.observe([{ read_model: 'a', lag_seconds: 100 }], at);
    expect(await sampler.sample(at)).toBe(0);
    await sampler.stop();
    expect((await database.db.query('SELECT minute, read_model, lag_seconds FROM read_model_lag ORDER BY read_model')).rows).toEqual([
      { minute, read_model: 'a', lag_seconds: 7 },
      { minute, read_model: 'b', lag_seconds: 9 },
    ]);
  });

  it('parks an event it keeps failing on, goes on with the rest, and applies it again on retry', async () => {
    const r = runner();
    await r.prepare();
    await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    const poison = await store.append('p-1', [{ type: 'Poison', data: {} }], 'no_stream');
    const after = await store.append('b-1', [{ type: 'Counted', data: {} }], 'no_stream');
    await r.start();
    expect(await r.waitFor(after.position, { timeoutMs: 10000 })).toBe(true);
    // The failed attempts rolled back whole: the poison event's row is not there.
    expect(await counts()).toEqual({ 'a-1': 1, 'b-1': 1 });
    const parked = await r.parked();
    expect(parked).toEqual([
      expect.objectContaining({ consumer: 'stream_counts:v1', position: poison.position, type: 'Poison', error: 'cannot project this event', attempts: 2 }),
    ]);
    expect((await r.status()).items[0]).toMatchObject({ parked: 1, error: null, behind: false, lag_seconds: 0 });

    expect(await r.retryParked('stream_counts')).toEqual({ retried: 0, still_parked: 1 });
    poisoned = false;
    expect(await r.retryParked('stream_counts')).toEqual({ retried: 1, still_parked: 0 });
    expect(await counts()).toEqual({ 'a-1': 1, 'b-1': 1, 'p-1': 1 });
    expect(await r.parked()).toEqual([]);
  });

  it('a money projection never skips: it stalls on the event, says so, and resumes once it succeeds', async () => {
    const r = runner(counting({ whenFailing: 'stop' }));
    await r.prepare();
    await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    const poisonedAt = Date.now();
    const poison = await store.append('p-1', [{ type: 'Poison', data: {} }], 'no_stream');
    const after = await store.append('b-1', [{ type: 'Counted', data: {} }], 'no_stream');
    await r.start();
    const stalled = await eventually(async () => {
      const item = (await r.status()).items[0];
      return item.stalled_since !== null && item;
    });
    expect(stalled.error).toMatchObject({ message: 'cannot project this event', event_id: expect.any(String) });
    // Its lag is the stalled event's age, and grows while it stays there.
    expect(stalled.behind).toBe(true);
    expect(stalled.lag_seconds).toBeGreaterThan(0);
    expect(stalled.lag_seconds).toBeLessThanOrEqual((Date.now() - poisonedAt) / 1000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await r.status()).items[0].lag_seconds).toBeGreaterThanOrEqual(stalled.lag_seconds + 0.19);
    // A writer waiting on a stalled read model hears so at once instead of its whole timeout.
    const started = Date.now();
    expect(await r.waitFor(after.position, { timeoutMs: 10000 })).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await r.parked()).toEqual([]);
    expect(await counts()).toEqual({ 'a-1': 1 });

    poisoned = false;
    await eventually(async () => (await r.status()).items[0].position === after.position, 15000);
    expect(await r.waitFor(after.position)).toBe(true);
    expect(await counts()).toEqual({ 'a-1': 1, 'p-1': 1, 'b-1': 1 });
    expect((await r.status()).items[0]).toMatchObject({ stalled_since: null, error: null, position: after.position });
    expect(poison.position < after.position).toBe(true);
  });

  it('runs each consumer on one instance at a time and applies each event once', async () => {
    const first = runner();
    const second = runner();
    await first.prepare();
    await second.prepare();
    await Promise.all([first.start(), second.start()]);
    let last;
    for (let i = 0; i < 30; i++) last = await store.append(`s-${i % 3}`, [{ type: 'Counted', data: {} }], 'any');
    expect(await first.waitFor(last!.position, { timeoutMs: 10000 })).toBe(true);
    expect(await counts()).toEqual({ 's-0': 10, 's-1': 10, 's-2': 10 });
    const { rows } = await database.db.query('SELECT owner FROM consumer_leases WHERE name = $1', ['stream_counts:v1']);
    expect(rows).toHaveLength(1);

    // The leader stops (its lease is released): the other instance takes over.
    const leader = [first, second].find((r) => (r as any).running.size === 1)!;
    const other = leader === first ? second : first;
    await leader.stop();
    const next = await store.append('s-0', [{ type: 'Counted', data: {} }], 'any');
    expect(await other.waitFor(next.position, { timeoutMs: 10000 })).toBe(true);
    expect((await counts())['s-0']).toBe(11);
  });

  it.each([0, 200])('rebuilds beside the live read model, which serves until the new build takes over (pausing %i%% of each batch)', async (rebuildPausePercent) => {
    // How many events each transaction applies, live build and new build alike.
    const applied: number[] = [];
    const projection: Projection = {
      ...counting(),
      async applyBatch(tx, events) {
        applied.push(events.length);
        for (const event of events) await counting().apply(tx, event);
      },
    };
    const r = runner(projection, { ...FAST, rebuildPausePercent });
    await r.prepare();
    await r.start();
    let last;
    for (let i = 0; i < 1200; i++) last = await store.append(`s-${i % 4}`, [{ type: 'Counted', data: {} }], 'any');
    await r.waitFor(last!.position, { timeoutMs: 20000 });
    const before = await counts();
    // Damage the live read model; a rebuild restores it from the events alone.
    await database.db.query("UPDATE stream_counts SET n = 999 WHERE stream_id = 's-0'");

    applied.length = 0;
    let writing = true;
    const writes = (async () => {
      let n = 0;
      // A paced rebuild catches up only with a log that grows slower than it replays: a
      // bounded number of writes then, at a steady rate, rather than as many as fit.
      while (writing && (!rebuildPausePercent || n < 200)) {
        await store.append(`w-${n % 3}`, [{ type: 'Counted', data: {} }], 'any');
        n++;
        // Like requests arriving from sockets: PGlite answers without leaving the microtask queue.
        await new Promise((resolve) => (rebuildPausePercent ? setTimeout(resolve, 5) : setImmediate(resolve)));
      }
      return n;
    })();
    const rebuilding = r.rebuild(['stream_counts']);
    // While the new build catches up, queries still read the live (damaged) rows.
    expect((await counts())['s-0']).toBe(999);
    const [status] = await rebuilding;
    writing = false;
    const written = await writes;
    const end = await store.headPosition();
    expect(await r.waitFor(end, { timeoutMs: 10000 })).toBe(true);

    expect(status.build).toMatch(/^stream_counts:v1\.\d+$/);
    const after = await counts();
    const { 'w-0': w0 = 0, 'w-1': w1 = 0, 'w-2': w2 = 0, ...rest } = after;
    expect(rest).toEqual(before);
    expect(w0 + w1 + w2).toBe(written);
    // Paced, the replay of 1,200+ events goes in transactions of at most 100 events; at full speed, in far larger ones.
    if (rebuildPausePercent) expect(Math.max(...applied)).toBeLessThanOrEqual(100);
    else expect(Math.max(...applied)).toBeGreaterThan(500);
    // The replaced build's tables are dropped.
    await eventually(async () => (await schemas()).length === 1);
    expect(await schemas()).toEqual([`rm_stream_counts_v1_${status.build!.split('.')[1]}`]);
  });

  it('runs the builds beside live ones one at a time, and each takes over once caught up', async () => {
    // The first projection's new build fails until it is let through: the second's must not start meanwhile.
    let held = false;
    const first: Projection = {
      ...counting({ whenFailing: 'stop' }),
      name: 'a_first_counts',
      tables: ['a_first_counts'],
      schema: 'CREATE TABLE IF NOT EXISTS a_first_counts (stream_id text PRIMARY KEY, n integer NOT NULL)',
      async apply(tx, event) {
        if (held) throw new Error('held back by the test');
        await tx.query(`INSERT INTO a_first_counts (stream_id, n) VALUES ($1, 1) ON CONFLICT (stream_id) DO UPDATE SET n = a_first_counts.n + 1`, [event.streamId]);
      },
    };
    const r = new ProjectionRunner(database.db, store, [first, counting()], FAST);
    runners.push(r);
    await r.prepare();
    await r.start();
    let last;
    for (let i = 0; i < 20; i++) last = await store.append(`s-${i % 4}`, [{ type: 'Counted', data: {} }], 'any');
    expect(await r.waitFor(last!.position, { timeoutMs: 10000 })).toBe(true);

    held = true;
    const rebuilding = r.rebuild(['a_first_counts', 'stream_counts']);
    rebuilding.catch(() => undefined); // awaited below; a failed expectation before must not leave it unhandled
    const newBuildsRunning = async () =>
      (
        await database.db.query(
          `SELECT b.projection FROM consumer_leases l JOIN projection_builds b ON b.id = l.name WHERE b.state = 'building' ORDER BY b.projection`,
        )
      ).rows.map((row) => row.projection);
    const firstFailing = async () => (await database.db.query(`SELECT error FROM projection_checkpoints WHERE name LIKE 'a_first_counts:v1.%'`)).rows[0]?.error;
    await eventually(firstFailing);
    // Several supervisor rounds: the second new build still waits its turn.
    for (let i = 0; i < 8; i++) {
      expect(await newBuildsRunning()).toEqual(['a_first_counts']);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await r.status()).items.map((p) => [p.name, !!p.rebuilding])).toEqual([
      ['a_first_counts', true],
      ['stream_counts', true],
    ]);

    held = false;
    const rebuilt = await rebuilding;
    expect(rebuilt.map((p) => [p.name, p.rebuilding, p.build])).toEqual([
      ['a_first_counts', null, expect.stringMatching(/^a_first_counts:v1\.\d+$/)],
      ['stream_counts', null, expect.stringMatching(/^stream_counts:v1\.\d+$/)],
    ]);
    expect(Object.values(await counts()).reduce((a: number, b) => a + Number(b), 0)).toBe(20);
  });

  it('builds a new version beside the old one; the old version never writes its tables or takes the read model back', async () => {
    const v1 = runner(counting({ version: 1 }));
    await v1.prepare();
    await v1.start();
    const first = await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    await v1.waitFor(first.position);

    // A rolling deploy: v2 starts while v1 still runs.
    const v2 = runner(counting({ version: 2 }));
    await v2.prepare();
    await v2.start();
    const second = await store.append('a-1', [{ type: 'Counted', data: {} }], 'any');
    expect(await v2.waitFor(second.position, { timeoutMs: 10000 })).toBe(true);
    await eventually(async () => (await v2.status()).items[0].version === 2);
    // The wait above did not hold on v1's live build (another version); now v2's own serves.
    // It can have taken over before the second append reached it: wait for that.
    expect(await v2.waitFor(second.position, { timeoutMs: 10000 })).toBe(true);
    expect(await counts()).toEqual({ 'a-1': 2 });
    await eventually(async () => (await schemas()).join() === 'rm_stream_counts_v2');

    // v1 restarting keeps its hands off: v2 serves and v1 runs nothing for it.
    await v1.stop();
    const again = runner(counting({ version: 1 }));
    await again.prepare();
    await again.start();
    const third = await store.append('a-1', [{ type: 'Counted', data: {} }], 'any');
    expect(await v2.waitFor(third.position, { timeoutMs: 10000 })).toBe(true);
    expect(await counts()).toEqual({ 'a-1': 3 });
    expect((await database.db.query(`SELECT id, state FROM projection_builds`)).rows).toEqual([{ id: 'stream_counts:v2', state: 'live' }]);
  });

  it('does not hold writes on a live build of another version that nobody here runs (a rolling deploy)', async () => {
    const v1 = runner(counting({ version: 1 }));
    await v1.prepare();
    await v1.start();
    const first = await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    expect(await v1.waitFor(first.position)).toBe(true);
    await v1.stop();

    // v2 cannot catch up yet (its apply fails until `closed` is lifted), and no instance runs v1 any more.
    let closed = true;
    const gated = counting({ version: 2, whenFailing: 'stop' });
    const v2 = runner({
      ...gated,
      apply: async (tx, event) => {
        if (closed) throw new Error('not yet');
        await gated.apply(tx, event);
      },
    });
    await v2.prepare();
    await v2.start();
    const second = await store.append('a-1', [{ type: 'Counted', data: {} }], 'any');
    // The write is stored; its read model is v1's until v2 takes over: a stale read, not a 5 s wait.
    expect(await v2.waitFor(second.position, { timeoutMs: 3000 })).toBe(true);
    expect((await v2.status()).items[0]).toEqual(expect.objectContaining({ version: 1 }));
    closed = false;
    await eventually(async () => (await v2.status()).items[0].version === 2, 20000);
    expect(await counts()).toEqual({ 'a-1': 2 });
  });

  it('takes over the tables the read model had before builds existed, once caught up', async () => {
    await database.db.exec('CREATE TABLE stream_counts (stream_id text PRIMARY KEY, n integer NOT NULL)');
    await database.db.query(`INSERT INTO stream_counts VALUES ('legacy', 7)`);
    await database.db.query(`INSERT INTO projection_checkpoints (name, version, position) VALUES ('stream_counts', 1, '0')`);
    const last = await store.append('a-1', [{ type: 'Counted', data: {} }], 'no_stream');
    const r = runner();
    await r.prepare();
    // The legacy table serves until the build has caught up.
    expect(await counts()).toEqual({ legacy: 7 });
    await r.start();
    expect(await r.waitFor(last.position, { timeoutMs: 10000 })).toBe(true);
    expect(await counts()).toEqual({ 'a-1': 1 });
    expect((await database.db.query(`SELECT name FROM projection_checkpoints ORDER BY name`)).rows).toEqual([{ name: 'stream_counts:v1' }]);
  });

  it('rejects a rebuild of an unknown projection', async () => {
    const r = runner();
    await r.prepare();
    await expect(r.rebuild(['nope'])).rejects.toThrow(/unknown projection "nope"/);
  });
});
