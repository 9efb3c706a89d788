import { ConfigError, redactUrl, Settings } from '../config/settings';
import { Database } from '../database/database';
import { EventStore } from './event-store';
import type { EventStoreDbEventStore } from './eventstoredb/eventstoredb-event-store';
import { PostgresEventStore } from './postgres/postgres-event-store';

/**
 * EventStoreDB when EVENTSTORE_URL is set, else the events table of the service's own
 * database (PGlite or DATABASE_URL). A URL the client refuses, or a server that does not
 * answer, stops the start with a ConfigError naming EVENTSTORE_URL: better than a service
 * that starts and fails every command.
 */
export async function openEventStore(settings: Settings, database: Database): Promise<EventStore> {
  if (!settings.eventStoreUrl) {
    const store = new PostgresEventStore(database);
    await store.start();
    return store;
  }
  const shown = redactUrl(settings.eventStoreUrl);
  // The client (gRPC, protobuf) loads only where events go to EventStoreDB.
  const { EventStoreDbEventStore } = await import('./eventstoredb/eventstoredb-event-store');
  let store: EventStoreDbEventStore;
  try {
    store = new EventStoreDbEventStore({ url: settings.eventStoreUrl, retryMs: settings.eventStoreRetryMs });
  } catch (error: any) {
    throw new ConfigError(`EVENTSTORE_URL "${shown}" is not a valid connection string: ${firstLine(error)}`);
  }
  try {
    await store.start();
  } catch (error: any) {
    await store.close().catch(() => undefined);
    throw new ConfigError(`EVENTSTORE_URL "${shown}" did not answer: ${firstLine(error)}`);
  }
  return store;
}

function firstLine(error: any): string {
  return String(error?.message ?? error).split('\n')[0];
}
