import { randomUUID } from 'node:crypto';
import { EventStoreUnavailableError, START, WrongExpectedRevisionError } from '../../src/event-store/event-store';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { EsdbStandIn } from '../support/esdb-standin';

/**
 * What a real node answers besides a result, on both of the client's append paths:
 * BatchAppend (what it uses against a server that lists it, with no per-call credentials)
 * and plain Append. Not ready and busy (every start and restart passes through them),
 * NotLeader (a failover), timeouts: each is ridden out, and each append is written once.
 */
describe.each([
  ['BatchAppend', true],
  ['plain Append', false],
])('EventStoreDbEventStore through %s, on a node that refuses', (path, batchAppend) => {
  let standIn: EsdbStandIn;
  let store: EventStoreDbEventStore;
  let run = 0;
  let s: (name: string) => string;
  beforeAll(async () => {
    standIn = await new EsdbStandIn({ batchAppend }).start();
    store = new EventStoreDbEventStore({ url: standIn.url, streamPrefixes: ['app-'], retryMs: 5000 });
    await store.start();
  });
  beforeEach(() => {
    const prefix = `app-t${++run}`;
    s = (name) => `${prefix}${name}`;
  });
  afterAll(async () => {
    await store.close();
    await standIn.stop();
  });

  const served = () => (batchAppend ? standIn.appendsServed.batchAppend : standIn.appendsServed.append);
  const other = () => (batchAppend ? standIn.appendsServed.append : standIn.appendsServed.batchAppend);

  it(`appends through ${path} only, and maps a conflict there to WrongExpectedRevisionError`, async () => {
    const [before, otherBefore] = [served(), other()];
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    await expect(store.append(s('order-1'), [{ type: 'B', data: {} }], 'no_stream')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await expect(store.append(s('order-1'), [{ type: 'B', data: {} }], 7)).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await expect(store.append(s('order-2'), [{ type: 'B', data: {} }], 'stream_exists')).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect([served() - before, other() - otherBefore]).toEqual([4, 0]);
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A']);
  });

  it('rides out a node that is not ready: appends and reads answer once it is', async () => {
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    standIn.notReady(700);
    const [appended, read, all, head] = await Promise.all([
      store.append(s('order-1'), [{ type: 'B', data: {} }], 0),
      store.readStream(s('order-1')),
      store.readAll({ after: START, limit: 1 }),
      store.headPosition(),
    ]);
    expect(appended.nextRevision).toBe(1);
    expect(read.map((e) => e.type)[0]).toBe('A');
    expect(all).toHaveLength(1);
    expect(head).toEqual(expect.any(String));
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A', 'B']);
  });

  it('rides out a busy node', async () => {
    standIn.busy(500);
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'any');
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A']);
  });

  it('starts against a node still not ready', async () => {
    standIn.notReady(600);
    const late = new EventStoreDbEventStore({ url: standIn.url, streamPrefixes: ['app-'] });
    try {
      await late.start();
    } finally {
      await late.close();
    }
  });

  it('rides out NotLeader (appends the node did not make, all those pending on BatchAppend) and writes each once, at the leader', async () => {
    standIn.refuseAppends('not-leader');
    const results = await Promise.all(['A', 'B', 'C'].map((type, i) => store.append(s(`order-${i}`), [{ type, data: {} }], 'any')));
    expect(results.map((r) => r.nextRevision)).toEqual([0, 0, 0]);
    for (const [i, type] of ['A', 'B', 'C'].entries()) expect((await store.readStream(s(`order-${i}`))).map((e) => e.type)).toEqual([type]);
  });

  it('rides out a timeout before the write, and writes once', async () => {
    standIn.refuseAppends('timeout');
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'any');
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A']);
  });

  it('rides out a commit timeout (written, answered late): the retry is the same write, not a second', async () => {
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    standIn.refuseAppends('timeout-after-write');
    expect((await store.append(s('order-1'), [{ type: 'B', data: {} }], 'any')).nextRevision).toBe(1);
    standIn.refuseAppends('timeout-after-write');
    expect((await store.append(s('order-1'), [{ type: 'C', data: {} }], 1)).nextRevision).toBe(2);
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A', 'B', 'C']);
  });

  it('writes an any append once when the node crashed after writing it and before answering (its id cache gone when the retry comes)', async () => {
    await store.append(s('listing-1'), [{ type: 'Downloaded', data: {} }], 'any');
    standIn.refuseAppends('crash-after-write');
    const result = await store.append(s('listing-1'), [{ type: 'Downloaded', data: {} }], 'any');
    expect(result.nextRevision).toBe(1);
    const stored = await store.readStream(s('listing-1'));
    expect(stored.map((e) => e.type)).toEqual(['Downloaded', 'Downloaded']);
    expect(stored[1].position).toBe(result.position);
  });

  it('writes a stream_exists append and an exact-revision append once across such a crash too', async () => {
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    standIn.refuseAppends('crash-after-write');
    expect((await store.append(s('order-1'), [{ type: 'B', data: {} }], 'stream_exists')).nextRevision).toBe(1);
    standIn.refuseAppends('crash-after-write');
    expect((await store.append(s('order-1'), [{ type: 'C', data: {} }], 1)).nextRevision).toBe(2);
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A', 'B', 'C']);
  });

  it('says the store is unavailable when the node stays not ready past EVENTSTORE_RETRY_MS', async () => {
    const impatient = new EventStoreDbEventStore({ url: standIn.url, streamPrefixes: ['app-'], retryMs: 300 });
    try {
      await impatient.start();
      standIn.notReady(1500);
      await expect(impatient.append(s('order-1'), [{ id: randomUUID(), type: 'A', data: {} }], 'no_stream')).rejects.toBeInstanceOf(EventStoreUnavailableError);
      await expect(impatient.readStream(s('order-1'))).rejects.toBeInstanceOf(EventStoreUnavailableError);
    } finally {
      standIn.notReady(0);
      await impatient.close();
    }
  });
});
