import { randomUUID } from 'node:crypto';
import { KurrentDBClient, eventTypeFilter, jsonEvent, persistentSubscriptionToAllSettingsFromDefaults } from '@kurrent/kurrentdb-client';
import { EventStoreUnavailableError, RecordedEvent, START, WrongExpectedRevisionError, toPosition } from '../../src/event-store/event-store';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { isUnanswered } from '../../src/event-store/eventstoredb/recorded';
import { serviceStreamPrefixes } from '../../src/event-store/eventstoredb/stream-prefixes';
import { EsdbStandIn } from '../support/esdb-standin';

/** What only the EventStoreDB adapter has to get right (the shared behaviour is in contract.ts), on the stand-in. */
describe('EventStoreDbEventStore on the stand-in', () => {
  let standIn: EsdbStandIn;
  let store: EventStoreDbEventStore;
  let raw: KurrentDBClient;
  let run = 0;
  let s: (name: string) => string;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    store = new EventStoreDbEventStore({ url: standIn.url, streamPrefixes: ['app-'] });
    await store.start();
    raw = KurrentDBClient.connectionString(standIn.url.replace('esdb://', 'kurrentdb://'));
  });
  beforeEach(() => {
    const prefix = `app-t${++run}`;
    s = (name) => `${prefix}${name}`;
  });
  afterAll(async () => {
    await raw.dispose();
    await store.close();
    await standIn.stop();
  });

  it('filters on the service stream categories by default, none a prefix of another', () => {
    const prefixes = serviceStreamPrefixes();
    expect(prefixes).toEqual(expect.arrayContaining(['account-', 'accountslug-', 'ledger-', 'checkout-', 'inferenceusage-']));
    for (const p of prefixes) expect(prefixes.filter((q) => q.startsWith(p))).toEqual([p]);
  });

  it("leaves system events and other applications' streams out of $all and its head", async () => {
    const head = await store.headPosition();
    await raw.appendToStream('otherapp-1', jsonEvent({ type: 'Foreign', data: {} }));
    await raw.appendToStream('$maintenance', jsonEvent({ type: '$scavengeStarted', data: {} }));
    const mine = await store.append(s('order-1'), [{ type: 'Mine', data: {} }], 'no_stream');
    await raw.appendToStream('otherapp-2', jsonEvent({ type: 'Foreign', data: {} }));
    expect(standIn.events.some((e) => e.stream.startsWith('$'))).toBe(true);
    expect((await store.readAll({ after: head, limit: 10 })).map((e) => e.type)).toEqual(['Mine']);
    expect(await store.headPosition()).toBe(mine.position);
    // So a consumer at its own newest event is not behind because of a foreign one (lag).
    expect(await store.readAll({ after: mine.position, limit: 1 })).toEqual([]);
  });

  it('keeps event ids, so a retried append is taken once', async () => {
    const events = [{ id: randomUUID(), type: 'Paid', data: { n: 1 } }, { id: randomUUID(), type: 'Paid', data: { n: 2 } }];
    const first = await store.append(s('ledger-1'), events, 'no_stream');
    // The answer was lost; the command retries with the same ids and expected revision.
    const again = await store.append(s('ledger-1'), events, 'no_stream');
    expect(again).toEqual(first);
    const stored = await store.readStream(s('ledger-1'));
    expect(stored.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(stored.map((e) => e.metadata)).toEqual([{}, {}]);
    expect(stored[1].position).toBe(first.position);
  });

  it('names the stream and the expected revision in a lost race', async () => {
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    const error = await store.append(s('order-1'), [{ type: 'B', data: {} }], 5).catch((e) => e);
    expect(error).toBeInstanceOf(WrongExpectedRevisionError);
    expect([error.streamId, error.expected]).toEqual([s('order-1'), 5]);
  });

  it('tells onAppended listeners of its own appends', async () => {
    const heard: string[] = [];
    const off = store.onAppended((streamId, events) => heard.push(`${streamId}:${events.length}`));
    await store.append(s('order-1'), [{ type: 'A', data: {} }, { type: 'B', data: {} }], 'any');
    off();
    await store.append(s('order-2'), [{ type: 'A', data: {} }], 'any');
    expect(heard).toEqual([`${s('order-1')}:2`]);
  });

  /** An append by another process's client, which rides out a restart of the server as the service's appends do. */
  async function appendElsewhere(stream: string, event: ReturnType<typeof jsonEvent>): Promise<void> {
    for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 100))) {
      try {
        await raw.appendToStream(stream, event);
        return;
      } catch (error) {
        // Its gRPC channel may still be reconnecting after the stand-in came back, which answers "not ready" a while.
        if (Date.now() > deadline || !isUnanswered(error)) throw error;
      }
    }
  }

  async function followThrough(disrupt: () => Promise<void>): Promise<void> {
    const head = await store.headPosition();
    const received: RecordedEvent[] = [];
    const expected: string[] = [];
    const sub = store.subscribeToAll(head, async (batch) => {
      received.push(...batch);
    }, { onError: () => undefined });
    const appendSome = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        expected.push(id);
        await store.append(s(`follow-${i % 3}`), [{ id, type: 'Followed', data: {} }], 'any');
      }
    };
    const waitFor = async (count: number) => {
      for (let i = 0; i < 500 && received.length < count; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await appendSome(10);
    await waitFor(10);
    await disrupt();
    // Appended by another process: only the live subscription (or the poll) can tell.
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      expected.push(id);
      await appendElsewhere(s('elsewhere-1'), jsonEvent({ id, type: 'Followed', data: {} }));
    }
    await waitFor(15);
    await appendSome(5);
    await waitFor(20);
    await sub.stop();
    expect(received.map((e) => e.id)).toEqual(expected);
  }

  it('follows through a dropped live subscription without skipping or repeating an event', async () => {
    await followThrough(async () => standIn.dropSubscriptions());
  });

  it('follows through a server restart (every connection cut) without skipping or repeating an event', async () => {
    await followThrough(() => standIn.restart(300));
  });

  describe('persistent subscriptions', () => {
    const join = (types: string[], handler: (e: RecordedEvent, retryCount: number) => Promise<void>, maxRetries = 3) =>
      store.subscribePersistent(`g-${randomUUID().slice(0, 8)}`, { types, maxRetries, messageTimeoutMs: 10_000, bufferSize: 4, onError: () => undefined }, handler);
    const until = async (what: string, done: () => boolean) => {
      for (const deadline = Date.now() + 15_000; !done(); await new Promise((r) => setTimeout(r, 20))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      }
    };

    /**
     * Every delivery is counted (not a set): the handler sees duplicates when there are
     * some. Returns the deliveries and the ids appended before and after the disruption.
     */
    async function consumeThrough(disrupt: () => Promise<void>): Promise<{ deliveries: [string, number][]; before: string[]; after: string[] }> {
      const type = `Task${run}`;
      const deliveries: [string, number][] = [];
      const handled = () => new Set(deliveries.map(([id]) => id));
      const sub = join([type], async (e, retryCount) => {
        deliveries.push([e.id, retryCount]);
      });
      const appendSome = async (n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) {
          const id = randomUUID();
          ids.push(id);
          await store.append(s(`task-${i}`), [{ id, type, data: {} }], 'any');
        }
        return ids;
      };
      try {
        const before = await appendSome(5);
        await until('the first events were handled', () => handled().size === 5);
        await disrupt();
        const after = await appendSome(5);
        await until('the events after the cut were handled', () => handled().size === 10);
        await new Promise((r) => setTimeout(r, 500));
        expect([...handled()].sort()).toEqual([...before, ...after].sort());
        return { deliveries, before, after };
      } finally {
        await sub.stop();
      }
    }

    it('succeeds a group made before its types were recorded (an upgrade) by a version at its checkpoint that has the added type', async () => {
      const [old, added] = [`Old${run}`, `Added${run}`];
      const group = `legacy-${randomUUID().slice(0, 8)}`;
      // As an earlier release left it: the group on the server, its types known only to its filter.
      await raw.createPersistentSubscriptionToAll(group, persistentSubscriptionToAllSettingsFromDefaults({ startFrom: 'start' }), { filter: eventTypeFilter({ regex: `^${old}$` }) });
      const handled: string[] = [];
      const sub = store.subscribePersistent(group, { types: [old, added], maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 4, onError: () => undefined }, async (e) => {
        if (e.type === added && !handled.includes(e.id)) {
          handled.push(e.id);
          throw new Error('refused once, to be parked');
        }
        handled.push(e.id);
      });
      try {
        const [a, b] = [randomUUID(), randomUUID()];
        await store.append(s('legacy-1'), [{ id: a, type: old, data: {} }], 'no_stream');
        await store.append(s('legacy-2'), [{ id: b, type: added, data: {} }], 'no_stream');
        await until('both types were handled', () => handled.includes(a) && handled.includes(b));
        // The version now consumed is the one whose parked events are listed.
        await until('the added one was parked', () => standIn.persistent.parkedCount(`${group}-v2`) === 1);
        expect((await store.parkedEvents(group)).map((e) => e.id)).toEqual([b]);
      } finally {
        await sub.stop();
      }
    });

    it('joins again after its connection dropped; the node kept its acknowledgements, so nothing comes twice', async () => {
      const { deliveries, before, after } = await consumeThrough(async () => standIn.dropSubscriptions());
      expect(deliveries.map(([id]) => id).sort()).toEqual([...before, ...after].sort());
    });

    it('joins again after a server restart; what was acknowledged after the last checkpoint comes again, at retry count 0 (at least once)', async () => {
      const { deliveries, before, after } = await consumeThrough(() => standIn.restart(300));
      // Five events are fewer than the server's minimum checkpoint count (10): no checkpoint
      // was written, so the restarted node hands the five out again as new.
      const count = (id: string) => deliveries.filter(([d]) => d === id).length;
      expect(before.map(count)).toEqual([2, 2, 2, 2, 2]);
      expect(after.map(count)).toEqual([1, 1, 1, 1, 1]);
      expect(deliveries.every(([, retryCount]) => retryCount === 0)).toBe(true);
    });

    it('loses a replayed parked event whose handling a node restart cut short, once the group checkpointed past it (pinned: documented on the port, in operations.md and the console)', async () => {
      const type = `Replayed${run}`;
      const group = `g-${randomUUID().slice(0, 8)}`;
      let phase: 'park' | 'replay' | 'fine' = 'park';
      const deliveries: [string, number][] = [];
      const ids = Array.from({ length: 10 }, () => randomUUID());
      const poison = ids[0];
      const sub = store.subscribePersistent(group, { types: [type], maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 16, onError: () => undefined }, async (e, retryCount) => {
        deliveries.push([e.id, retryCount]);
        if (e.id !== poison || phase === 'fine') return;
        if (phase === 'park') throw new Error('parked until fixed');
        return new Promise<void>(() => undefined); // handling the replayed event when the node goes down
      });
      try {
        for (const [i, id] of ids.entries()) await store.append(s(`replayed-${i}`), [{ id, type, data: {} }], 'no_stream');
        const last = (await store.readStream(s('replayed-9')))[0].position;
        const checkpointed = async () => {
          const at = (await raw.getPersistentSubscriptionToAllInfo(group)).stats.lastCheckpointedEventPosition;
          return !!at && toPosition(at.commit, at.prepare) >= last;
        };
        // Ten processed, the server's minimum: a checkpoint on a tick after checkPointAfter (2 s).
        for (const deadline = Date.now() + 8000; !(await checkpointed()); await new Promise((r) => setTimeout(r, 100))) {
          if (Date.now() > deadline) throw new Error('timed out waiting for the checkpoint');
        }
        expect((await store.parkedEvents(group)).map((e) => e.id)).toEqual([poison]);
        phase = 'replay';
        expect(await store.replayParked(group)).toBe(1);
        await until('the replayed event is being handled', () => deliveries.filter(([id]) => id === poison).length === 2);
        await standIn.restart(300);
        phase = 'fine';
        const after = randomUUID();
        await store.append(s('replayed-after'), [{ id: after, type, data: {} }], 'no_stream');
        await until('the event after the restart was handled', () => deliveries.some(([id]) => id === after));
        await new Promise((r) => setTimeout(r, 500));
        // Neither handed out again nor parked: lost to the group.
        expect(deliveries.filter(([id]) => id === poison)).toEqual([[poison, 0], [poison, 0]]);
        expect(await store.parkedEvents(group)).toEqual([]);
      } finally {
        await sub.stop();
      }
    });

    it("acknowledges its types in other applications' streams without handling them", async () => {
      const type = `Shared${run}`;
      const handled: string[] = [];
      const group = `g-${randomUUID().slice(0, 8)}`;
      const sub = store.subscribePersistent(group, { types: [type], maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 4 }, async (e) => {
        handled.push(e.streamId);
      });
      try {
        await appendElsewhere('otherapp-jobs', jsonEvent({ type, data: {} }));
        await store.append(s('jobs'), [{ type, data: {} }], 'any');
        await until('its own event was handled', () => handled.length === 1);
        await new Promise((r) => setTimeout(r, 300));
        expect(handled).toEqual([s('jobs')]);
        const info = await raw.getPersistentSubscriptionToAllInfo(group);
        expect([info.stats.totalInFlightMessages, info.stats.parkedMessageCount]).toEqual([0, 0n]);
      } finally {
        await sub.stop();
      }
    });

    it("parks with the handler's error as the reason, and lists nothing for a group that parked nothing", async () => {
      const type = `Poison${run}`;
      const group = `g-${randomUUID().slice(0, 8)}`;
      expect(await store.parkedEvents(group)).toEqual([]);
      const sub = store.subscribePersistent(group, { types: [type], maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 4, onError: () => undefined }, async () => {
        throw new Error('no handler for this one');
      });
      try {
        await store.append(s('poison'), [{ type, data: {} }], 'any');
        const stream = `$persistentsubscription-$all::${group}-parked`;
        await until('it was parked', () => standIn.events.some((e) => e.stream === stream));
        const link = standIn.events.find((e) => e.stream === stream)!;
        expect(JSON.parse(Buffer.from(link.metadata).toString()).reason).toContain('no handler for this one');
        expect((await store.parkedEvents(group)).map((e) => [e.streamId, e.type])).toEqual([[s('poison'), type]]);
      } finally {
        await sub.stop();
      }
    });
  });

  it('rides out a node restart: an append and reads made while it is down answer once it is back', async () => {
    await store.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    await standIn.stop();
    const events = [{ id: randomUUID(), type: 'B', data: {} }];
    const appended = store.append(s('order-1'), events, 0);
    const read = store.readStream(s('order-1'));
    const head = store.headPosition();
    // Back on the same port once all three have found it down (the stand-in counts no calls).
    await new Promise((r) => setTimeout(r, 300));
    await standIn.start(standIn.port);
    expect((await appended).nextRevision).toBe(1);
    expect((await read).map((e) => e.type)).toEqual(expect.arrayContaining(['A']));
    expect(await head).toEqual(expect.any(String));
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A', 'B']);
  });

  it('says the store is unavailable once EVENTSTORE_RETRY_MS passes with the server down, and takes the retry once after', async () => {
    const impatient = new EventStoreDbEventStore({ url: standIn.url, streamPrefixes: ['app-'], retryMs: 300 });
    await impatient.append(s('order-1'), [{ type: 'A', data: {} }], 'no_stream');
    await standIn.stop();
    const events = [{ id: randomUUID(), type: 'B', data: {} }];
    try {
      await expect(impatient.append(s('order-1'), events, 0)).rejects.toBeInstanceOf(EventStoreUnavailableError);
      await expect(impatient.readStream(s('order-1'))).rejects.toBeInstanceOf(EventStoreUnavailableError);
      await expect(impatient.readAll({ after: START, limit: 1 })).rejects.toBeInstanceOf(EventStoreUnavailableError);
      await expect(impatient.headPosition()).rejects.toBeInstanceOf(EventStoreUnavailableError);
    } finally {
      await standIn.start(standIn.port);
    }
    // The caller's own retry, with the same ids: taken once.
    const result = await store.append(s('order-1'), events, 0);
    expect(result.nextRevision).toBe(1);
    expect((await store.readStream(s('order-1'))).map((e) => e.type)).toEqual(['A', 'B']);
    await impatient.close();
  });

  it('fails to start, saying so, when nothing answers at the URL', async () => {
    const nowhere = new EventStoreDbEventStore({ url: 'esdb://127.0.0.1:1?tls=false' });
    await expect(nowhere.start(3000)).rejects.toThrow();
    await nowhere.close();
  });

  it('refuses a malformed connection string', () => {
    expect(() => new EventStoreDbEventStore({ url: 'http//nonsense' })).toThrow();
  });
});
