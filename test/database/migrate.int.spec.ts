import { randomUUID } from 'node:crypto';
import { migrate, pendingMigrations } from '../../src/database/migrate';
import { PostgresEventStore } from '../../src/event-store/postgres/postgres-event-store';
import { createTestDatabase, TestDatabase } from '../support/database';

/** Migrations apply once; the database functions, defined once each, apply again when their text changes. */
describe('migrate', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('leaves nothing pending on a migrated database, and applies nothing the second time', async () => {
    expect(await pendingMigrations(database.db)).toEqual([]);
    expect(await migrate(database.db)).toEqual([]);
  });

  it('applies a function again when the database has an older text of it, and appends work after', async () => {
    const { rows } = await database.db.query<{ name: string }>(`SELECT name FROM schema_migrations WHERE name LIKE 'functions/append_to_stream.sql@%'`);
    expect(rows).toHaveLength(1);
    // As a database migrated by code with another text of the function would be.
    await database.db.query(`UPDATE schema_migrations SET name = 'functions/append_to_stream.sql@0000000000000000' WHERE name = $1`, [rows[0].name]);
    await database.db.exec('DROP FUNCTION append_to_stream(text, text, jsonb)');
    expect(await pendingMigrations(database.db)).toEqual([rows[0].name]);

    expect(await migrate(database.db)).toEqual([rows[0].name]);
    expect(await pendingMigrations(database.db)).toEqual([]);
    const store = new PostgresEventStore(database.db);
    await store.start();
    try {
      const appended = await store.append(`test-${randomUUID()}`, [{ type: 'Happened', data: {} }], 'no_stream');
      expect(appended.nextRevision).toBe(0);
    } finally {
      await store.close();
    }
  });
});
