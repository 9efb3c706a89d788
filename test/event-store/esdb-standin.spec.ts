import {
  KurrentDBClient,
  eventTypeFilter,
  jsonEvent,
  persistentSubscriptionToAllSettingsFromDefaults,
  PersistentSubscriptionDoesNotExistError,
  PersistentSubscriptionExistsError,
  PersistentSubscriptionFailedError,
  START,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
  type PersistentSubscriptionToAll,
  type PersistentSubscriptionToAllResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { randomUUID } from 'node:crypto';
import { isUnanswered } from '../../src/event-store/eventstoredb/recorded';
import { EsdbStandIn } from '../support/esdb-standin';

/** Tries again while the client's channel reconnects after a restart. */
async function eventually<T>(call: () => Promise<T>): Promise<T> {
  for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 100))) {
    try {
      return await call();
    } catch (error) {
      if (Date.now() > deadline || !isUnanswered(error)) throw error;
    }
  }
}

/** The real client against the stand-in: the wire subset the adapter relies on. */
describe('EventStoreDB stand-in, through the real client', () => {
  let standIn: EsdbStandIn;
  let client: KurrentDBClient;
  beforeAll(async () => {
    standIn = await new EsdbStandIn().start();
    client = KurrentDBClient.connectionString(standIn.url);
  });
  afterAll(async () => {
    await client.dispose();
    await standIn.stop();
  });

  it('appends with expected revisions and reads a stream back', async () => {
    const r = await client.appendToStream('order-1', [jsonEvent({ type: 'A', data: { n: 1 } }), jsonEvent({ type: 'B', data: { n: 2 } })], { streamState: 'no_stream' });
    expect(r.nextExpectedRevision).toBe(1n);
    await expect(client.appendToStream('order-1', jsonEvent({ type: 'C', data: {} }), { streamState: 'no_stream' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
    const events = [];
    for await (const e of client.readStream('order-1')) events.push(e.event!);
    expect(events.map((e) => [e.type, e.revision, e.data])).toEqual([['A', 0n, { n: 1 }], ['B', 1n, { n: 2 }]]);
  });

  it('reads $all with a stream-name prefix filter, leaving system events out', async () => {
    const seen: string[] = [];
    for await (const e of client.readAll({ fromPosition: START, filter: streamNameFilter({ prefixes: ['order-'] }), maxCount: 10 })) seen.push(e.event!.streamId);
    expect(seen).toEqual(['order-1', 'order-1']);
  });

  describe("the server's idempotency window", () => {
    const ids = (stream: string) => standIn.streamEvents(stream).map((e) => e.id);
    const ev = (id: string) => jsonEvent({ id, type: 'A', data: {} });

    it('takes an any append twice as one write while the node remembers its ids, and twice after a restart emptied them; an exact revision once either way', async () => {
      const d = randomUUID();
      await client.appendToStream('idem-2', ev(d), { streamState: 'any' });
      await client.appendToStream('idem-2', ev(d), { streamState: 'any' });
      expect(ids('idem-2')).toEqual([d]);
      await standIn.restart(0, { notReadyMs: 0 });
      await eventually(() => client.appendToStream('idem-2', ev(d), { streamState: 'any' }));
      expect(ids('idem-2')).toEqual([d, d]);
      // An exact revision is checked against the stream itself, which a restart keeps.
      await client.appendToStream('idem-2', ev(d), { streamState: 'no_stream' });
      expect(ids('idem-2')).toEqual([d, d]);
      // All through BatchAppend, the client's path when the server lists it.
      expect(standIn.appendsServed.append).toBe(0);
    });
  });

  describe('persistent subscriptions to $all', () => {
    let n = 0;
    let type: string;
    const consumers: PersistentSubscriptionToAll[] = [];
    beforeEach(() => {
      type = `Ps${++n}`;
    });
    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.unsubscribe()));
    });
    const create = (group: string, settings: Parameters<typeof persistentSubscriptionToAllSettingsFromDefaults>[0]) =>
      client.createPersistentSubscriptionToAll(group, persistentSubscriptionToAllSettingsFromDefaults({ startFrom: START, ...settings }), {
        filter: eventTypeFilter({ regex: `^${type}$` }),
      });
    const consume = (group: string, bufferSize: number) => {
      const received: PersistentSubscriptionToAllResolvedEvent[] = [];
      const sub = client.subscribeToPersistentSubscriptionToAll(group, { bufferSize });
      sub.on('data', (e: PersistentSubscriptionToAllResolvedEvent) => received.push(e));
      sub.on('error', () => undefined);
      consumers.push(sub);
      return { sub, received };
    };
    const until = async (what: string, done: () => boolean | Promise<boolean>) => {
      for (const deadline = Date.now() + 5000; !(await done()); await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      }
    };
    const append = async (stream: string, count: number) => {
      for (let i = 0; i < count; i++) await client.appendToStream(stream, jsonEvent({ type, data: { i } }));
    };

    it('starts a group AT its start position, as the server does, and reports the start in GetInfo', async () => {
      await append(`ps-${type}`, 2);
      const first = [] as bigint[];
      for await (const e of client.readAll({ fromPosition: START, filter: eventTypeFilter({ regex: `^${type}$` }) })) first.push(e.event!.position!.commit);
      const position = { commit: first[0], prepare: first[0] };
      await create('from-position', { startFrom: position });
      await expect(create('from-position', {})).rejects.toBeInstanceOf(PersistentSubscriptionExistsError);
      expect((await client.getPersistentSubscriptionToAllInfo('from-position')).settings.startFrom).toEqual(position);
      const { received } = consume('from-position', 10);
      await until('both events arrived', () => received.length === 2);
      expect(received.map((e) => e.event!.position!.commit)).toEqual(first);
    });

    it('shares round robin with at most bufferSize in flight per consumer, and hands out more as acks come', async () => {
      await create('round-robin', {});
      const a = consume('round-robin', 2);
      const b = consume('round-robin', 2);
      await until('both joined', async () => (await client.getPersistentSubscriptionToAllInfo('round-robin')).connections.length === 2);
      await append(`rr-${type}`, 6);
      await until('both consumers are full', () => a.received.length + b.received.length === 4);
      await new Promise((r) => setTimeout(r, 200));
      expect([a.received.length, b.received.length]).toEqual([2, 2]);
      await a.sub.ack(a.received[0]);
      await until('a got one more', () => a.received.length === 3);
      expect(new Set([...a.received, ...b.received].map((e) => e.event!.id)).size).toBe(5);
    });

    it('hands what a departed consumer held to another with its retry count raised', async () => {
      await create('departed', {});
      const dying = consume('departed', 1);
      await append(`dep-${type}`, 1);
      await until('the first consumer holds it', () => dying.received.length === 1);
      await dying.sub.unsubscribe();
      const next = consume('departed', 1);
      await until('the next consumer got it', () => next.received.length === 1);
      expect([next.received[0].event!.id, next.received[0].retryCount]).toEqual([dying.received[0].event!.id, 1]);
    });

    it('retries on message timeout, parks a retry past maxRetryCount as a link the parked stream resolves', async () => {
      await create('parking', { maxRetryCount: 1, messageTimeout: 300 });
      const { sub, received } = consume('parking', 1);
      await append(`park-${type}`, 1);
      await until('it came again after the timeout', () => received.length === 2);
      expect(received.map((e) => e.retryCount)).toEqual([0, 1]);
      await sub.nack('retry', 'still failing', received[1]);
      const stream = '$persistentsubscription-$all::parking-parked';
      await until('it was parked', () => standIn.events.some((e) => e.stream === stream));
      const parked = [];
      for await (const e of client.readStream(stream, { resolveLinkTos: true })) parked.push(e);
      expect(parked.map((e) => [e.link?.type, e.event?.id, e.event?.streamId])).toEqual([['$>', received[0].event!.id, `park-${type}`]]);
      await new Promise((r) => setTimeout(r, 500));
      expect(received).toHaveLength(2);
    });

    it('replays parked events up to stopAt with retry count 0, as links at the link position, then truncates the parked stream', async () => {
      await create('replay', { maxRetryCount: 0 });
      const { sub, received } = consume('replay', 10);
      await append(`replay-${type}`, 3);
      await until('all three arrived', () => received.length === 3);
      for (const e of received) await sub.nack('park', 'not now', e);
      const stream = '$persistentsubscription-$all::replay-parked';
      const readParked = async () => {
        const links = [];
        try {
          for await (const e of client.readStream(stream, { resolveLinkTos: true })) links.push(e);
        } catch (error) {
          if (!(error instanceof StreamNotFoundError)) throw error;
        }
        return links;
      };
      await until('all three were parked', async () => (await readParked()).length === 3);
      expect((await client.getPersistentSubscriptionToAllInfo('replay')).stats.parkedMessageCount).toBe(3n);

      // Two of the three: stopAt is the parked stream's event number to stop before.
      await client.replayParkedMessagesToAll('replay', { stopAt: 2 });
      await until('two came again', () => received.length === 5);
      const replayed = received.slice(3);
      expect(replayed.map((e) => [e.event!.id, e.retryCount, e.link?.streamId, e.link?.type])).toEqual(
        received.slice(0, 2).map((e) => [e.event!.id, 0, stream, '$>']),
      );
      // As the server sends a resolved link: the event at the link's position.
      expect(replayed.map((e) => e.event!.position)).toEqual(replayed.map((e) => e.link!.position));
      await until('the parked stream was truncated before 2', async () => (await readParked()).length === 1);
      expect((await readParked())[0].event!.id).toBe(received[2].event!.id);
      const meta = standIn.events.filter((e) => e.stream === `$$${stream}`);
      expect(meta.map((e) => [e.type, JSON.parse(Buffer.from(e.data).toString()).$tb])).toEqual([['$metadata', 2]]);
      expect((await client.getPersistentSubscriptionToAllInfo('replay')).stats.parkedMessageCount).toBe(1n);

      // Answered by the link's id: acknowledged, nothing comes again.
      for (const e of replayed) await sub.ack(e);
      await new Promise((r) => setTimeout(r, 300));
      expect(received).toHaveLength(5);
      expect((await client.getPersistentSubscriptionToAllInfo('replay')).stats.totalInFlightMessages).toBe(0);

      // The rest, with no limit.
      await client.replayParkedMessagesToAll('replay');
      await until('the last came again', () => received.length === 6);
      expect([received[5].event!.id, received[5].retryCount]).toEqual([received[2].event!.id, 0]);
      await until('the parked stream is empty', async () => (await readParked()).length === 0);
      await expect(client.replayParkedMessagesToAll('replay', { stopAt: -1 })).rejects.toBeInstanceOf(PersistentSubscriptionFailedError);
      await expect(client.replayParkedMessagesToAll('no-such-group')).rejects.toBeInstanceOf(PersistentSubscriptionDoesNotExistError);
    });

    it('checks message timeouts once a second, as the server does: a 300 ms timeout comes back within 0.3 to 1.3 s', async () => {
      await create('tick', { messageTimeout: 300 });
      const { received } = consume('tick', 1);
      const arrivals: number[] = [];
      const watch = setInterval(() => {
        while (arrivals.length < received.length) arrivals.push(Date.now());
      }, 5);
      try {
        await append(`tick-${type}`, 1);
        await until('it came again', () => arrivals.length === 2);
      } finally {
        clearInterval(watch);
      }
      expect(arrivals[1] - arrivals[0]).toBeGreaterThanOrEqual(300);
      expect(arrivals[1] - arrivals[0]).toBeLessThanOrEqual(1300);
    });

    it('checkpoints as the server does and reloads from there on a restart: acknowledged events after it come again at retry count 0, retry counts start over, replayed parked events unacknowledged are lost', async () => {
      // A checkpoint on the tick once 3 are processed and 200 ms passed.
      await create('checkpoints', { checkPointLowerBound: 3, checkPointUpperBound: 100, checkPointAfter: 200, maxRetryCount: 5 });
      const first = consume('checkpoints', 10);
      await append(`cp-${type}`, 4);
      await until('four arrived', () => first.received.length === 4);
      for (const e of first.received) await first.sub.ack(e);
      const info = () => client.getPersistentSubscriptionToAllInfo('checkpoints');
      await until('a checkpoint was written at the fourth', async () => ((await info()).stats.lastCheckpointedEventPosition?.commit ?? 0n) >= first.received[3].event!.position!.commit);
      expect((await info()).settings).toMatchObject({ checkPointAfter: 200, checkPointLowerBound: 3, checkPointUpperBound: 100 });
      expect(standIn.events.filter((e) => e.stream === '$persistentsubscription-$all::checkpoints-checkpoint').map((e) => e.type)).toEqual(['$SubscriptionCheckpoint']);

      // After it: one acknowledged, one refused twice, one parked and replayed but not acknowledged yet.
      await append(`cp-${type}`, 3);
      await until('three more arrived', () => first.received.length === 7);
      const [acked, failing, parked] = first.received.slice(4);
      await first.sub.ack(acked);
      await first.sub.nack('retry', 'failing', failing);
      await until('the failing one came again', () => first.received.length === 8);
      await first.sub.nack('retry', 'failing', first.received[7]);
      await until('the failing one came a third time', () => first.received.length === 9);
      expect(first.received[8].retryCount).toBe(2);
      await first.sub.nack('park', 'parked', parked);
      await until('it was parked', async () => (await info()).stats.parkedMessageCount === 1n);
      await client.replayParkedMessagesToAll('checkpoints');
      await until('the parked one came again', () => first.received.length === 10);
      await until('the parked stream was truncated', async () => (await info()).stats.parkedMessageCount === 0n);

      await standIn.restart(0, { notReadyMs: 0 });
      const second = consume('checkpoints', 10);
      await until('the events after the checkpoint came again', () => second.received.length === 3);
      await new Promise((r) => setTimeout(r, 300));
      // The acknowledged and the failing one again (retry count 0), the parked-and-replayed one as well, being after the checkpoint.
      expect(second.received.map((e) => [e.event!.id, e.retryCount])).toEqual([acked, failing, parked].map((e) => [e.event!.id, 0]));
      for (const e of second.received) await second.sub.ack(e);
    });

    it('loses a replayed parked event that was not acknowledged before a restart, when the group had checkpointed past it', async () => {
      await create('replay-lost', { checkPointLowerBound: 1, checkPointUpperBound: 1, maxRetryCount: 0 });
      const first = consume('replay-lost', 10);
      await append(`rl-${type}`, 2);
      await until('both arrived', () => first.received.length === 2);
      const [poison, good] = first.received;
      await first.sub.nack('park', 'poison', poison);
      await first.sub.ack(good);
      const info = () => client.getPersistentSubscriptionToAllInfo('replay-lost');
      await until('parked and checkpointed past both', async () => {
        const i = await info();
        return i.stats.parkedMessageCount === 1n && (i.stats.lastCheckpointedEventPosition?.commit ?? 0n) >= good.event!.position!.commit;
      });
      await client.replayParkedMessagesToAll('replay-lost');
      await until('the parked one came again', () => first.received.length === 3);
      await until('the parked stream was truncated', async () => (await info()).stats.parkedMessageCount === 0n);
      await standIn.restart(0, { notReadyMs: 0 });
      const second = consume('replay-lost', 10);
      await append(`rl-${type}`, 1);
      await until('the new event arrived', () => second.received.length >= 1);
      await new Promise((r) => setTimeout(r, 300));
      // Neither parked nor behind the checkpoint: gone.
      expect(second.received.map((e) => e.event!.id)).not.toContain(poison.event!.id);
      expect((await info()).stats.parkedMessageCount).toBe(0n);
    });
  });
});
