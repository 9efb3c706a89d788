import { randomBytes, randomUUID } from 'node:crypto';
import { KurrentDBClient, WrongExpectedVersionError, jsonEvent } from '@kurrent/kurrentdb-client';
import { EventStoreDbEventStore } from '../../src/event-store/eventstoredb/eventstoredb-event-store';
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
