import { randomBytes, randomUUID } from 'node:crypto';
import { KurrentDBClient, WrongExpectedVersionError, jsonEvent } from '@kurrent/kurrentdb-client';
import { AppendTooLargeError, DeletedStreamError, PersistentGroupRefusedError, START, parsePosition, toPosition } from '../../src/event-store/event-store';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
import { toApiError } from '../../src/platform/error-filter';
import { EsdbStandIn } from '../support/esdb-standin';
import { eventStoreContract } from './contract';
import { streamCommandsContract } from './stream-commands.contract';

/**
 * The stand-in always; a real server as well when EVENTSTORE_URL is set. Streams carry a
 * prefix of this run, which is the adapter's stream filter, so a real server's other
 * contents (earlier runs, other applications) stay out of every read.
 */
function harness(url: () => Promise<{ url: string; stop(): Promise<void> }>) {
  return async () => {
    const server = await url();
    const streamPrefix = `contract${randomBytes(4).toString('hex')}_`;
    const store = new EventStoreDbEventStore({ url: server.url, streamPrefixes: [streamPrefix] });
    await store.start();
    return {
      store,
      streamPrefix,
      close: async () => {
        await store.close();
        await server.stop();
      },
    };
  };
}

const onStandIn = harness(async () => {
  const standIn = await new EsdbStandIn().start();
  return { url: standIn.url, stop: () => standIn.stop() };
});
eventStoreContract('EventStoreDB stand-in', onStandIn);
streamCommandsContract('EventStoreDB stand-in', onStandIn);

if (process.env.EVENTSTORE_URL) {
  const onServer = harness(async () => ({ url: process.env.EVENTSTORE_URL!, stop: async () => undefined }));
  eventStoreContract('EventStoreDB server', onServer);
  streamCommandsContract('EventStoreDB server', onServer);
}

/**
 * The server's idempotency rules (IndexWriter.CheckCommit) that the adapter's appends lean
 * on, through the client as the adapter uses it (BatchAppend where the server lists it).
 */
function idempotencyContract(name: string, url: () => Promise<{ url: string; stop(): Promise<void> }>): void {
  describe(`EventStoreDB idempotency: ${name}`, () => {
    let server: { url: string; stop(): Promise<void> };
    let client: KurrentDBClient;
    const prefix = `contract${randomBytes(4).toString('hex')}_`;
    beforeAll(async () => {
      server = await url();
      client = KurrentDBClient.connectionString(server.url.replace(/^esdb:/, 'kurrentdb:'));
    });
    afterAll(async () => {
      await client.dispose();
      await server.stop();
    });
    const ids = async (stream: string) => {
      const read: string[] = [];
      for await (const e of client.readStream(stream)) read.push(e.event!.id);
      return read;
    };
    const ev = (id: string) => jsonEvent({ id, type: 'A', data: {} });

    it('takes [A,B] at no_stream twice as one write, and answers [A,C] there with WrongExpectedVersion', async () => {
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const stream = `${prefix}idem-1`;
      const first = await client.appendToStream(stream, [ev(a), ev(b)], { streamState: 'no_stream' });
      expect(await client.appendToStream(stream, [ev(a), ev(b)], { streamState: 'no_stream' })).toEqual(first);
      await expect(client.appendToStream(stream, [ev(a), ev(c)], { streamState: 'no_stream' })).rejects.toBeInstanceOf(WrongExpectedVersionError);
      expect(await ids(stream)).toEqual([a, b]);
    });

    it('takes [C] at an exact revision twice as one write; at a revision equal to the current one, writes the same id again', async () => {
      const [a, c] = [randomUUID(), randomUUID()];
      const stream = `${prefix}idem-2`;
      await client.appendToStream(stream, ev(a), { streamState: 'no_stream' });
      const first = await client.appendToStream(stream, ev(c), { streamState: 0n });
      expect(await client.appendToStream(stream, ev(c), { streamState: 0n })).toEqual(first);
      expect(await ids(stream)).toEqual([a, c]);
      await client.appendToStream(stream, ev(c), { streamState: 1n });
      expect(await ids(stream)).toEqual([a, c, c]);
    });

    it('takes an any append made twice in a row as one write (the node remembers its ids)', async () => {
      const d = randomUUID();
      const stream = `${prefix}idem-3`;
      const first = await client.appendToStream(stream, ev(d), { streamState: 'any' });
      expect(await client.appendToStream(stream, ev(d), { streamState: 'any' })).toEqual(first);
      expect(await ids(stream)).toEqual([d]);
    });
  });
}

idempotencyContract('stand-in', async () => {
  const standIn = await new EsdbStandIn().start();
  return { url: standIn.url, stop: () => standIn.stop() };
});
if (process.env.EVENTSTORE_URL) {
  idempotencyContract('server', async () => ({ url: process.env.EVENTSTORE_URL!, stop: async () => undefined }));
}

interface Server {
  url: string;
  stop(): Promise<void>;
  /** Writes n small events of another application to a stream (the stand-in straight into its log: the client's appends of that many take seconds there). */
  seedForeign(client: KurrentDBClient, stream: string, n: number): Promise<void>;
}

/** Through the client, 2,000 events an append. */
async function appendForeign(client: KurrentDBClient, stream: string, n: number): Promise<void> {
  for (let from = 0; from < n; from += 2000) {
    await client.appendToStream(stream, Array.from({ length: Math.min(2000, n - from) }, (_, i) => jsonEvent({ type: 'Foreign', data: { i: from + i } })));
  }
}

/**
 * What a server refuses that the adapter must turn into the port's clear errors (not a
 * 500): a tombstoned stream, an append over MaxAppendSize; and a $all of another
 * application's events to read past. On the stand-in through both append paths, and on a
 * real server when EVENTSTORE_URL is set.
 */
function serverRulesContract(name: string, url: () => Promise<Server>): void {
  describe(`EventStoreDB server rules through the adapter: ${name}`, () => {
    let server: Server;
    let client: KurrentDBClient;
    let store: EventStoreDbEventStore;
    const prefix = `contract${randomBytes(4).toString('hex')}_`;
    beforeAll(async () => {
      server = await url();
      client = KurrentDBClient.connectionString(server.url.replace(/^esdb:/, 'kurrentdb:'));
      store = new EventStoreDbEventStore({ url: server.url, streamPrefixes: [prefix], retryMs: 3000 });
      await store.start();
    });
    afterAll(async () => {
      await store.close();
      await client.dispose();
      await server.stop();
    });

    it('answers a read of and an append to a tombstoned stream with DeletedStreamError (404 through HTTP, not 500), and leaves its record out of $all', async () => {
      const head = await store.headPosition();
      const stream = `${prefix}gone-1`;
      await store.append(stream, [{ type: 'Made', data: {} }], 'no_stream');
      await client.tombstoneStream(stream);
      const read = store.readStream(stream);
      await expect(read).rejects.toBeInstanceOf(DeletedStreamError);
      await expect(read).rejects.toThrow(`stream ${stream} was deleted for good`);
      for (const expected of ['any', 0, 'no_stream', 'stream_exists'] as const) {
        await expect(store.append(stream, [{ type: 'After', data: {} }], expected)).rejects.toBeInstanceOf(DeletedStreamError);
      }
      const answer = toApiError(await read.catch((e) => e));
      expect([answer.status, answer.code]).toEqual([404, 'not_found']);
      // The log keeps the event written before; the tombstone record is the server's own.
      expect((await store.readAll({ after: head, limit: 10 })).map((e) => [e.streamId, e.type])).toEqual([[stream, 'Made']]);
    });

    it('refuses an append over the server\'s MaxAppendSize (1 MiB) with AppendTooLargeError naming the limit (413), writing nothing; one under it is taken', async () => {
      const stream = `${prefix}big-1`;
      const big = 'x'.repeat(1024 * 1024 + 10);
      const refused = store.append(stream, [{ type: 'Big', data: { big } }], 'no_stream');
      await expect(refused).rejects.toBeInstanceOf(AppendTooLargeError);
      const error = (await refused.catch((e) => e)) as AppendTooLargeError;
      expect(error.limitBytes).toBe(1024 * 1024);
      expect(error.message).toContain('MaxAppendSize of 1048576 bytes');
      expect([toApiError(error).status, toApiError(error).code]).toEqual([413, 'payload_too_large']);
      expect(await store.readStream(stream)).toEqual([]);
      // Two events that are each small but together over it: refused as one append, nothing written.
      const half = 'y'.repeat(600 * 1024);
      await expect(store.append(stream, [{ type: 'Half', data: { half } }, { type: 'Half', data: { half } }], 'no_stream')).rejects.toBeInstanceOf(AppendTooLargeError);
      expect(await store.readStream(stream)).toEqual([]);
      await store.append(stream, [{ type: 'Half', data: { half } }], 'no_stream');
      expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['Half']);
    });

    const until = async (what: string, done: () => boolean | Promise<boolean>, ms = 10_000) => {
      for (const deadline = Date.now() + ms; !(await done()); await new Promise((r) => setTimeout(r, 20))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      }
    };

    it('hands an event held past a 300 ms message timeout out again within 0.3 to 1.3 s (the server checks timeouts once a second)', async () => {
      const type = `Slow${randomBytes(4).toString('hex')}`;
      const group = `timeout-${randomBytes(4).toString('hex')}`;
      const arrivals: [number, number][] = [];
      const sub = store.subscribePersistent(group, { types: [type], startAfter: await store.headPosition(), maxRetries: 2, messageTimeoutMs: 300, bufferSize: 1, onError: () => undefined }, (_e, retryCount) => {
        arrivals.push([Date.now(), retryCount]);
        // The first delivery hangs (a stuck handler); the retry is answered.
        return arrivals.length === 1 ? new Promise<void>(() => undefined) : Promise.resolve();
      });
      try {
        await store.append(`${prefix}slow-1`, [{ type, data: {} }], 'no_stream');
        await until('it came again', () => arrivals.length >= 2);
      } finally {
        await sub.stop();
      }
      const gap = arrivals[1][0] - arrivals[0][0];
      expect(arrivals.slice(0, 2).map(([, retryCount]) => retryCount)).toEqual([0, 1]);
      expect(gap).toBeGreaterThanOrEqual(300);
      expect(gap).toBeLessThanOrEqual(1300);
    });

    it('tells onError clearly when the server refuses a group whose start is past the end of $all', async () => {
      await store.append(`${prefix}past-1`, [{ type: 'Made', data: {} }], 'no_stream');
      const { commit, prepare } = parsePosition(await store.headPosition());
      const past = toPosition(commit + 10n ** 12n, prepare + 10n ** 12n);
      const errors: unknown[] = [];
      const group = `past-${randomBytes(4).toString('hex')}`;
      const sub = store.subscribePersistent(group, { types: ['Never'], startAfter: past, maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 1, onError: (e) => errors.push(e) }, async () => undefined);
      try {
        await until('onError heard of it', () => errors.length > 0);
      } finally {
        await sub.stop();
      }
      expect(errors[0]).toBeInstanceOf(PersistentGroupRefusedError);
      expect((errors[0] as Error).message).toContain(`persistent subscription group ${group} cannot be created`);
      expect((errors[0] as Error).message).toContain('past the end of $all');
    });

    it('joins again when its group is deleted under it, and goes on with the events after', async () => {
      const type = `Deleted${randomBytes(4).toString('hex')}`;
      const group = `deleted-${randomBytes(4).toString('hex')}`;
      const handled: string[] = [];
      const startAfter = await store.headPosition();
      const sub = store.subscribePersistent(group, { types: [type], startAfter, maxRetries: 0, messageTimeoutMs: 10_000, bufferSize: 4, onError: () => undefined }, async (e) => {
        handled.push(e.id);
      });
      try {
        const [a, b] = [randomUUID(), randomUUID()];
        await store.append(`${prefix}del-1`, [{ id: a, type, data: {} }], 'any');
        await until('the first was handled', () => handled.includes(a));
        await client.deletePersistentSubscriptionToAll(group);
        await store.append(`${prefix}del-1`, [{ id: b, type, data: {} }], 'any');
        await until('the one after the delete was handled', () => handled.includes(b));
        // Made again where the consumer asked it to start: the first may come again (at least once).
        expect(new Set(handled)).toEqual(new Set([a, b]));
        expect((await client.getPersistentSubscriptionToAllInfo(group)).groupName).toBe(group);
      } finally {
        await sub.stop();
      }
    });

    it("catches up over 10,000 other applications' events and finds the head behind them within their deadlines", async () => {
      const before = await store.headPosition();
      const mine = `${prefix}mine-1`;
      await store.append(mine, [{ type: 'Mine', data: {} }], 'no_stream');
      const foreign = `otherapp${randomBytes(4).toString('hex')}-bulk`;
      await server.seedForeign(client, foreign, 10_000);
      // The head: the service's newest event, with the 10,000 after it read past (deadline 2 s).
      let started = Date.now();
      const head = await store.headPosition();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(head > before).toBe(true);
      expect((await store.readAllBackward({ limit: 1 })).map((e) => e.streamId)).toEqual([mine]);
      // Catch-up from the start of this run: its one event, then caught up (deadline 5 s).
      started = Date.now();
      const seen: string[] = [];
      let caughtUp!: () => void;
      const done = new Promise<void>((resolve) => (caughtUp = resolve));
      const sub = store.subscribeToAll(before === START ? START : before, async (events) => {
        seen.push(...events.map((e) => e.streamId));
      }, { batchSize: 100, onCaughtUp: async () => caughtUp() });
      await done;
      const took = Date.now() - started;
      await sub.stop();
      expect(took).toBeLessThan(5000);
      expect(seen).toEqual([mine]);
    });
  });
}

for (const batchAppend of [true, false]) {
  serverRulesContract(`stand-in, ${batchAppend ? 'BatchAppend' : 'plain Append'}`, async () => {
    const standIn = await new EsdbStandIn({ batchAppend }).start();
    return {
      url: standIn.url,
      stop: () => standIn.stop(),
      seedForeign: async (_client, stream, n) => {
        standIn.write(stream, Array.from({ length: n }, (_, i) => ({ id: randomUUID(), type: 'Foreign', contentType: 'application/json', data: Buffer.from(JSON.stringify({ i })), metadata: new Uint8Array() })));
      },
    };
  });
}
if (process.env.EVENTSTORE_URL) {
  serverRulesContract('server', async () => ({ url: process.env.EVENTSTORE_URL!, stop: async () => undefined, seedForeign: appendForeign }));
}
