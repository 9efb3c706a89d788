import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { createTestDatabase, onPostgresServer } from '../support/database';
import { eventStoreContract } from './contract';
import { streamCommandsContract } from './stream-commands.contract';

// PGlite by default; the Postgres server when DATABASE_URL is set (a database of its own).
const onPostgres = async () => {
  const database = await createTestDatabase();
  const store = new PostgresEventStore(database.db);
  await store.start();
  return {
    store,
    streamPrefix: '',
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
};
eventStoreContract(onPostgresServer ? 'Postgres server' : 'PGlite', onPostgres);
streamCommandsContract(onPostgresServer ? 'Postgres server' : 'PGlite', onPostgres);
