import { randomUUID } from 'node:crypto';
import { EventStore, PersistentHandler, PersistentSubscriptionOptions, RecordedEvent, WrongExpectedRevisionError } from '../../src/event-store/event-store';

/**
 * The behaviour every EventStore adapter shares, run by postgres.contract.spec.ts and
 * eventstoredb.contract.spec.ts. Each test writes its own streams (under the harness's
 * prefix, which an adapter that filters $all by stream name is configured to read) and
 * reads from the head it found at its start, so one store serves the whole file.
 */
export interface ContractHarness {
  store: EventStore;
  /** Prefix of every stream a test writes. */
  streamPrefix: string;
  close(): Promise<void>;
}

const event = (type = 'Happened', data: Record<string, unknown> = {}) => ({ type, data });

export function eventStoreContract(name: string, open: () => Promise<ContractHarness>): void {
  describe(`EventStore contract: ${name}`, () => {
    let harness: ContractHarness;
    let store: EventStore;
    let run = 0;
    let s: (name: string) => string;
    let head: string;
    beforeAll(async () => {
      harness = await open();
      store = harness.store;
    });
    beforeEach(async () => {
      const prefix = `${harness.streamPrefix}t${++run}`;
      s = (name) => `${prefix}${name}`;
      head = await store.headPosition();
    });
    afterAll(async () => {
      await harness?.close();
    });

    describe('append and expected revisions', () => {
      it('appends to a new stream with no_stream and reads it back in order', async () => {
        const result = await store.append(s('order-1'), [event('A', { n: 1 }), event('B', { n: 2 })], 'no_stream');
        expect(result.nextRevision).toBe(1);
        const events = await store.readStream(s('order-1'));
        expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([['A', 0, { n: 1 }], ['B', 1, { n: 2 }]]);
        expect(events[1].position).toBe(result.position);
      });

      it('reads a stream from a revision on, and nothing past its end', async () => {
        await store.append(s('order-1'), [event('A'), event('B'), event('C')], 'no_stream');
        expect((await store.readStream(s('order-1'), { fromRevision: 1 })).map((e) => [e.type, e.revision])).toEqual([['B', 1], ['C', 2]]);
        expect((await store.readStream(s('order-1'), { fromRevision: 0 })).map((e) => e.type)).toEqual(['A', 'B', 'C']);
        expect(await store.readStream(s('order-1'), { fromRevision: 3 })).toEqual([]);
        expect(await store.readStream(s('nothing-here'), { fromRevision: 2 })).toEqual([]);
      });

      it('reads at most limit events of a stream from a revision', async () => {
        await store.append(s('order-1'), [event('A'), event('B'), event('C')], 'no_stream');
        expect((await store.readStream(s('order-1'), { fromRevision: 1, limit: 1 })).map((e) => e.type)).toEqual(['B']);
        expect((await store.readStream(s('order-1'), { limit: 5 })).map((e) => e.type)).toEqual(['A', 'B', 'C']);
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
      it('reads after a position in order, in batches, up to the head', async () => {
        for (let i = 0; i < 5; i++) await store.append(s(`s-${i}`), [event('E', { i })], 'no_stream');
        const firstTwo = await store.readAll({ after: head, limit: 2 });
        expect(firstTwo.map((e) => e.data.i)).toEqual([0, 1]);
        const rest = await store.readAll({ after: firstTwo[1].position, limit: 100 });
        expect(rest.map((e) => e.data.i)).toEqual([2, 3, 4]);
        expect(await store.headPosition()).toBe(rest[2].position);
        expect(await store.readAll({ after: rest[2].position, limit: 1 })).toEqual([]);
      });

      it('reads backwards from the head and from before a position, newest first, without the event at it', async () => {
        for (let i = 0; i < 5; i++) await store.append(s(`s-${i}`), [event('E', { i })], 'no_stream');
        const newest = await store.readAllBackward({ limit: 2 });
        expect(newest.map((e) => e.data.i)).toEqual([4, 3]);
        expect(newest[0].position).toBe(await store.headPosition());
        const older = await store.readAllBackward({ before: newest[1].position, limit: 2 });
        expect(older.map((e) => e.data.i)).toEqual([2, 1]);
        const forward = await store.readAll({ after: head, limit: 5 });
        expect((await store.readAllBackward({ before: forward[0].position, limit: 3 })).every((e) => e.position < forward[0].position)).toBe(true);
      });

      it('stamps each event with the time it was written, so the oldest one after a position gives the lag', async () => {
        const before = Date.now();
        const first = await store.append(s('s-1'), [event('Older')], 'no_stream');
        // Over a second: the EventStoreDB client hands out whole seconds.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const second = await store.append(s('s-2'), [event('Newer')], 'no_stream');
        const after = Date.now();
        const [oldest] = await store.readAll({ after: head, limit: 1 });
        const [next] = await store.readAll({ after: first.position, limit: 1 });
        expect([oldest.type, next.type]).toEqual(['Older', 'Newer']);
        // The store's clock, which may be another machine's (a second of skew allowed, and one of rounding down)...
        expect(oldest.createdAt.getTime()).toBeGreaterThanOrEqual(before - 2000);
        expect(next.createdAt.getTime()).toBeLessThanOrEqual(after + 1000);
        // ...at each append, not at the read: read together, they are at least as far apart as whole seconds allow.
        expect(next.createdAt.getTime() - oldest.createdAt.getTime()).toBeGreaterThanOrEqual(1000);
        expect(await store.readAll({ after: second.position, limit: 1 })).toEqual([]);
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

      it('hands a subscription with types only those, reads past the rest, and catches up over them', async () => {
        await store.append(s('t-1'), [event('Wanted'), event('Other')], 'no_stream');
        await store.append(s('t-2'), [event('Other'), event('Other')], 'no_stream');
        const { position: last } = await store.append(s('t-3'), [event('Other')], 'no_stream');
        const seen: string[] = [];
        let readTo = head;
        let caughtUpPastLast!: () => void;
        const caughtUp = new Promise<void>((r) => (caughtUpPastLast = r));
        const subscription = store.subscribeToAll(
          head,
          async (batch, to) => {
            seen.push(...batch.map((e) => e.type));
            expect(to >= readTo).toBe(true);
            if (batch.length) expect(to >= batch[batch.length - 1].position).toBe(true);
            readTo = to;
          },
          { types: ['Wanted', 'Late'], batchSize: 2, onCaughtUp: async () => (readTo >= last ? caughtUpPastLast() : undefined) },
        );
        await caughtUp;
        expect(seen).toEqual(['Wanted']);
        const { position: late } = await store.append(s('t-4'), [event('Other'), event('Late')], 'no_stream');
        for (let i = 0; i < 500 && readTo < late; i++) await new Promise((r) => setTimeout(r, 10));
        await subscription.stop();
        expect(seen).toEqual(['Wanted', 'Late']);
        expect(readTo >= late).toBe(true);
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

    describe('persistent subscriptions (competing consumers)', () => {
      // Each test has its own group and its own event type, so groups never see each other's events.
      let group: string;
      let type: string;
      const subscriptions: { stop(): Promise<void> }[] = [];
      beforeEach(() => {
        group = `group-${randomUUID().slice(0, 8)}`;
        type = `Job${run}`;
      });
      afterEach(async () => {
        await Promise.all(subscriptions.splice(0).map((sub) => sub.stop()));
      });
      const options = (more: Partial<PersistentSubscriptionOptions> = {}): PersistentSubscriptionOptions => ({
        types: [type],
        startAfter: head,
        maxRetries: 2,
        messageTimeoutMs: 10_000,
        bufferSize: 4,
        onError: () => undefined,
        ...more,
      });
      const join = (handler: PersistentHandler, more?: Partial<PersistentSubscriptionOptions>) => {
        const sub = store.subscribePersistent(group, options(more), handler);
        subscriptions.push(sub);
        return sub;
      };
      const appendJobs = async (n: number, from = 0) => {
        const ids: string[] = [];
        for (let i = from; i < from + n; i++) {
          const id = randomUUID();
          ids.push(id);
          await store.append(s(`job-${i}`), [{ id, type, data: { i } }], 'any');
        }
        return ids;
      };
      const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 15_000) => {
        for (const deadline = Date.now() + ms; !(await done()); ) {
          if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      const settle = () => new Promise((r) => setTimeout(r, 300));

      it('shares the events of its types between the consumers of a group, each event to one of them', async () => {
        await store.append(s('other'), [event('NotForTheGroup')], 'no_stream');
        const expected = await appendJobs(20);
        const byConsumer = new Map<string, string[]>([['a', []], ['b', []]]);
        for (const name of ['a', 'b']) {
          join(async (e) => {
            await new Promise((r) => setTimeout(r, 10));
            byConsumer.get(name)!.push(e.id);
          });
        }
        expected.push(...(await appendJobs(20, 20)));
        const all = () => [...byConsumer.get('a')!, ...byConsumer.get('b')!];
        await until('every event was handled', () => all().length >= expected.length);
        await settle();
        expect(all().sort()).toEqual([...expected].sort());
        expect(byConsumer.get('a')!.length).toBeGreaterThan(0);
        expect(byConsumer.get('b')!.length).toBeGreaterThan(0);
      });

      it('hands a refused event out again with its retry count, then parks it after the last retry; the others go on', async () => {
        const [poison, ...good] = await appendJobs(4);
        const attempts: number[] = [];
        const handled: string[] = [];
        join(async (e, retryCount) => {
          if (e.id === poison) {
            attempts.push(retryCount);
            throw new Error('cannot handle this one');
          }
          handled.push(e.id);
        });
        let parked: RecordedEvent[] = [];
        await until('the group parked the poison event', async () => (parked = await store.parkedEvents(group)).length > 0);
        await settle();
        expect(attempts).toEqual([0, 1, 2]);
        expect(handled.sort()).toEqual([...good].sort());
        expect(parked.map((e) => [e.id, e.type, e.data])).toEqual([[poison, type, { i: 0 }]]);
      });

      it('replays the parked events: handed out again from retry count 0, no longer parked, each handled once more', async () => {
        const [poison, good] = await appendJobs(2);
        let failing = true;
        const deliveries: { id: string; retryCount: number; position: string; data: unknown }[] = [];
        join(async (e, retryCount) => {
          deliveries.push({ id: e.id, retryCount, position: e.position, data: e.data });
          if (e.id === poison && failing) throw new Error('cannot handle this one yet');
        });
        const ofPoison = () => deliveries.filter((d) => d.id === poison);
        await until('the group parked the poison event', async () => (await store.parkedEvents(group)).length > 0);
        await settle();
        expect(ofPoison().map((d) => d.retryCount)).toEqual([0, 1, 2]);

        failing = false;
        expect(await store.replayParked(group)).toBe(1);
        // Once the replay answered, the parked list no longer has the event.
        expect(await store.parkedEvents(group)).toEqual([]);
        await until('the replayed event was handled', () => ofPoison().length === 4);
        // Acknowledged: nothing comes again, and nothing is parked.
        await new Promise((r) => setTimeout(r, 1000));
        expect(ofPoison().map((d) => d.retryCount)).toEqual([0, 1, 2, 0]);
        // The same event, at its own position in the log.
        expect(ofPoison()[3]).toEqual({ ...ofPoison()[0], retryCount: 0 });
        expect(deliveries.filter((d) => d.id === good)).toHaveLength(1);
        expect(await store.parkedEvents(group)).toEqual([]);
        expect(await store.replayParked(group)).toBe(0);
      });

      // Issue 45: more parked than one page of the parked stream's reads; none lost, none twice.
      it('lists and replays 50 parked events: each handed out once more, then none parked', async () => {
        const jobs = await appendJobs(50);
        let failing = true;
        const replayed: string[] = [];
        join(async (e, retryCount) => {
          if (failing) throw new Error(`not yet ${e.id}`);
          if (retryCount === 0) replayed.push(e.id);
        });
        await until('the group parked all 50', async () => (await store.parkedEvents(group)).length === 50, 30_000);
        expect((await store.parkedEvents(group)).map((e) => e.id).sort()).toEqual([...jobs].sort());
        failing = false;
        expect(await store.replayParked(group)).toBe(50);
        expect(await store.parkedEvents(group)).toEqual([]);
        await until('every replayed event was handled', () => replayed.length >= 50, 30_000);
        await settle();
        expect([...replayed].sort()).toEqual([...jobs].sort());
        expect(await store.parkedEvents(group)).toEqual([]);
      });

      it('replays to a consumer that joins later, and parks a replayed event again after maxRetries more refusals', async () => {
        expect(await store.replayParked(`no-such-${group}`)).toBe(0);
        const [poison] = await appendJobs(1);
        const refusals: number[] = [];
        const first = join(async (e, retryCount) => {
          refusals.push(retryCount);
          throw new Error(`refused ${e.id}`);
        });
        await until('the group parked the event', async () => (await store.parkedEvents(group)).length > 0);
        await first.stop();
        expect(await store.replayParked(group)).toBe(1);
        expect(await store.parkedEvents(group)).toEqual([]);
        // The group holds it for whoever joins; this consumer still refuses it, so it is parked again, once.
        join(async (e, retryCount) => {
          refusals.push(retryCount);
          throw new Error(`still refused ${e.id}`);
        });
        let parked: RecordedEvent[] = [];
        await until('the group parked the event again', async () => (parked = await store.parkedEvents(group)).length > 0);
        await settle();
        expect(refusals).toEqual([0, 1, 2, 0, 1, 2]);
        expect(parked.map((e) => e.id)).toEqual([poison]);
      });

      it('resumes where the group stands: a consumer that joins later gets only what was not acknowledged', async () => {
        const first = await appendJobs(5);
        const seenFirst: string[] = [];
        const sub = join(async (e) => {
          seenFirst.push(e.id);
        });
        await until('the first consumer handled everything', () => seenFirst.length === 5);
        // Acknowledgements may travel in batches: give them time to reach the group.
        await new Promise((r) => setTimeout(r, 1000));
        await sub.stop();
        const later = await appendJobs(3, 5);
        const seenLater: string[] = [];
        join(async (e) => {
          seenLater.push(e.id);
        });
        await until('the next consumer handled the new events', () => seenLater.length >= 3);
        await settle();
        expect(seenFirst.sort()).toEqual([...first].sort());
        expect(seenLater.sort()).toEqual([...later].sort());
      });

      it('hands an event whose consumer died mid-delivery to another consumer', async () => {
        const [id] = await appendJobs(1);
        let dyingGotIt = false;
        const dying = join(
          () => {
            dyingGotIt = true;
            return new Promise<void>(() => undefined); // hangs, never acknowledges, then its consumer dies
          },
          { messageTimeoutMs: 1000 },
        );
        await until('the first consumer holds the event', () => dyingGotIt);
        await dying.stop();
        const redelivered: [string, number][] = [];
        join(async (e, retryCount) => {
          redelivered.push([e.id, retryCount]);
        }, { messageTimeoutMs: 1000 });
        await until('another consumer got it', () => redelivered.length > 0);
        expect(redelivered[0][0]).toBe(id);
      });

      it('hands an event out again, as a retry, when its consumer holds it past the message timeout', async () => {
        const [id] = await appendJobs(1);
        const deliveries: [string, string, number][] = [];
        // The first delivery hangs (a stuck process, not a closed one); the retry may go to either consumer.
        for (const name of ['first', 'second']) {
          join(
            (e, retryCount) => {
              deliveries.push([name, e.id, retryCount]);
              return deliveries.length === 1 ? new Promise<void>(() => undefined) : Promise.resolve();
            },
            { messageTimeoutMs: 1000, bufferSize: 1 },
          );
        }
        await until('the event was handed out again', () => deliveries.length >= 2);
        await settle();
        expect(deliveries).toHaveLength(2);
        expect(deliveries.map(([, e, retry]) => [e, retry])).toEqual([[id, 0], [id, 1]]);
      });

      it('hands a type added to the group in a later release to its consumers from then on', async () => {
        const added = `${type}Added`;
        const firstRelease: string[] = [];
        const v1 = store.subscribePersistent(group, options(), async (e) => {
          firstRelease.push(e.id);
        });
        const [before] = await appendJobs(1);
        await until('the first release handled its event', () => firstRelease.includes(before));
        await v1.stop();
        // The next release: the same group, one more event type.
        const handled: string[] = [];
        join(async (e) => {
          handled.push(e.id);
        }, { types: [type, added] });
        const addedId = randomUUID();
        await store.append(s('added-1'), [{ id: addedId, type: added, data: {} }], 'no_stream');
        const [after] = await appendJobs(1, 1);
        await until('the added type and the old one were handled', () => handled.includes(addedId) && handled.includes(after));
      });

      it('starts a new group after its start position', async () => {
        await appendJobs(2);
        const start = await store.headPosition();
        const after = await appendJobs(2, 2);
        const seen: string[] = [];
        join(async (e) => {
          seen.push(e.id);
        }, { startAfter: start });
        await until('the group handled the events after its start', () => seen.length >= 2);
        await settle();
        expect(seen.sort()).toEqual([...after].sort());
      });
    });
  });
}
