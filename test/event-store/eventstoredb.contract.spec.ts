import { randomBytes } from 'node:crypto';
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
