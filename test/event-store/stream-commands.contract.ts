import { randomUUID } from 'node:crypto';
import { EventStore, ExpectedRevision, NewEvent, WrongExpectedRevisionError } from '../../src/event-store/event-store';
import { Decider, StreamCommands } from '../../src/event-store/stream-commands';
import { KeptStates } from '../../src/platform/kept-states';
import type { ContractHarness } from './contract';

/** A decider small enough to read at a glance: seats of a show, each taken once. */
type SeatEvent = { type: 'SeatReserved'; data: { seat: number; by: string } };
type SeatCommand = { seat: number; by: string };
interface Seats {
  taken: Map<number, string>;
}
class SeatTaken extends Error {}

const seats: Decider<SeatCommand, SeatEvent, Seats> = {
  initialState: () => ({ taken: new Map() }),
  evolve: (state, event) => ({ taken: new Map(state.taken).set(event.data.seat, event.data.by) }),
  decide: (command, state) => {
    const holder = state.taken.get(command.seat);
    if (holder === command.by) return []; // asked again: already done
    if (holder) throw new SeatTaken(`seat ${command.seat} is ${holder}'s`);
    return [{ type: 'SeatReserved', data: { seat: command.seat, by: command.by } }];
  },
};

/**
 * The generic command runner (load, decide, append at the loaded revision, retry a lost
 * race) on every EventStore adapter, run by the adapters' contract spec files.
 */
export function streamCommandsContract(name: string, open: () => Promise<ContractHarness>): void {
  describe(`StreamCommands: ${name}`, () => {
    let harness: ContractHarness;
    let store: EventStore;
    let stream: string;
    beforeAll(async () => {
      harness = await open();
      store = harness.store;
    });
    beforeEach(() => {
      stream = `${harness.streamPrefix}show-${randomUUID()}`;
    });
    afterAll(async () => {
      await harness?.close();
    });

    it('decides on the folded stream, appends what it decided, and answers the state after', async () => {
      const shows = new StreamCommands(store, seats);
      const first = await shows.handle(stream, { seat: 1, by: 'ada' });
      expect(first.recorded).toEqual([{ type: 'SeatReserved', data: { seat: 1, by: 'ada' } }]);
      expect([first.revision, [...first.state.taken]]).toEqual([0, [[1, 'ada']]]);
      const second = await shows.handle(stream, { seat: 2, by: 'bob' });
      expect([second.revision, [...second.state.taken]]).toEqual([1, [[1, 'ada'], [2, 'bob']]]);
      expect((await store.readStream(stream)).map((e) => e.data)).toEqual([{ seat: 1, by: 'ada' }, { seat: 2, by: 'bob' }]);
      expect(second.position).toBe((await store.readStream(stream))[1].position);
    });

    it('appends nothing when the decider records nothing, and answers where the stream ends', async () => {
      const shows = new StreamCommands(store, seats);
      const reserved = await shows.handle(stream, { seat: 1, by: 'ada' });
      const again = await shows.handle(stream, { seat: 1, by: 'ada' });
      expect([again.recorded, again.revision, again.position]).toEqual([[], 0, reserved.position]);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('asks a command given as a function of the state afresh on every attempt', async () => {
      const asked: number[] = [];
      const racing: typeof store.append = async (streamId, events, expected) => {
        if (asked.length === 1) await store.append(streamId, [{ type: 'SeatReserved', data: { seat: 1, by: 'rival' } }], 'any');
        return store.append(streamId, events, expected);
      };
      const shows = new StreamCommands(store, seats, { append: racing });
      // The first free seat, as the state shows it.
      const handled = await shows.handle(stream, (state) => {
        asked.push(state.taken.size);
        return { seat: state.taken.size + 1, by: 'ada' };
      });
      expect(asked).toEqual([0, 1]);
      expect([...handled.state.taken]).toEqual([[1, 'rival'], [2, 'ada']]);
    });

    it('passes a refusal on and appends nothing', async () => {
      const shows = new StreamCommands(store, seats);
      await shows.handle(stream, { seat: 1, by: 'ada' });
      await expect(shows.handle(stream, { seat: 1, by: 'bob' })).rejects.toBeInstanceOf(SeatTaken);
      expect(await store.readStream(stream)).toHaveLength(1);
    });

    it('decides again on a lost race: of two racing for one seat, one has it and the other is refused', async () => {
      const shows = new StreamCommands(store, seats);
      await shows.handle(stream, { seat: 9, by: 'warm-up' });
      const results = await Promise.allSettled(['ada', 'bob'].map((by) => shows.handle(stream, { seat: 1, by })));
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(SeatTaken);
      const stored = await store.readStream(stream);
      expect(stored.filter((e) => (e.data as SeatCommand).seat === 1)).toHaveLength(1);
    });

    it('gives up after its attempts, the conflict reaching the caller, when every attempt loses its race', async () => {
      const tries: ExpectedRevision[] = [];
      const racing: typeof store.append = async (streamId: string, events: readonly NewEvent[], expected: ExpectedRevision) => {
        tries.push(expected);
        // Another writer gets in first every time.
        await store.append(streamId, [{ type: 'SeatReserved', data: { seat: 100 + tries.length, by: 'rival' } }], 'any');
        return store.append(streamId, events, expected);
      };
      const shows = new StreamCommands(store, seats, { append: racing, attempts: 3 });
      await expect(shows.handle(stream, { seat: 1, by: 'ada' })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect(tries).toEqual(['no_stream', 0, 1]);
      expect((await store.readStream(stream)).map((e) => (e.data as SeatCommand).by)).toEqual(['rival', 'rival', 'rival']);
    });

    it('keeps folded states and reads only the events after them, events from other writers included', async () => {
      const reads: (number | undefined)[] = [];
      const counting = Object.create(store) as EventStore;
      counting.readStream = (streamId, options) => {
        reads.push(options?.fromRevision);
        return store.readStream(streamId, options);
      };
      const shows = new StreamCommands(counting, seats, { kept: new KeptStates(10) });
      await shows.handle(stream, { seat: 1, by: 'ada' });
      await store.append(stream, [{ type: 'SeatReserved', data: { seat: 2, by: 'elsewhere' } }], 0);
      const after = await shows.handle(stream, { seat: 3, by: 'bob' });
      expect([...after.state.taken]).toEqual([[1, 'ada'], [2, 'elsewhere'], [3, 'bob']]);
      expect(reads).toEqual([0, 1]);
      // A stream that does not exist is not kept: a later load reads it whole.
      await shows.load(`${stream}-none`);
      await shows.load(`${stream}-none`);
      expect(reads.slice(2)).toEqual([0, 0]);
    });

    it('decides on a state the caller loaded without reading the stream again; a stale one loses its race and is loaded afresh', async () => {
      const reads: string[] = [];
      const counting = Object.create(store) as EventStore;
      counting.readStream = (streamId, options) => {
        reads.push(streamId);
        return store.readStream(streamId, options);
      };
      const shows = new StreamCommands(counting, seats);
      const loaded = await shows.load(stream);
      await shows.handle(stream, { seat: 1, by: 'ada' }, loaded);
      expect(reads).toHaveLength(1);

      // Loaded before a rival took seat 2: the append at the old revision loses, the retry reads and refuses.
      const stale = await shows.load(stream);
      await store.append(stream, [{ type: 'SeatReserved', data: { seat: 2, by: 'rival' } }], 0);
      await expect(shows.handle(stream, { seat: 2, by: 'bob' }, stale)).rejects.toBeInstanceOf(SeatTaken);
      expect(reads).toHaveLength(3);
      expect((await store.readStream(stream)).map((e) => (e.data as SeatCommand).by)).toEqual(['ada', 'rival']);
    });

    it('runs commands on one stream in turn when evolve changes its state in place', async () => {
      const inPlace: Decider<SeatCommand, SeatEvent, Seats> = { ...seats, evolve: (state, event) => (state.taken.set(event.data.seat, event.data.by), state) };
      const shows = new StreamCommands(store, inPlace, { kept: new KeptStates(10), evolvesInPlace: true });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => shows.handle(stream, { seat: i, by: `p${i}` })));
      // In turn: no lost race, so every append went at the revision after the one before.
      expect(results.map((r) => r.revision)).toEqual([0, 1, 2, 3, 4, 5]);
      expect((await store.readStream(stream)).map((e) => (e.data as SeatCommand).seat)).toEqual([0, 1, 2, 3, 4, 5]);
    });
  });
}
