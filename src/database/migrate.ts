import * as fs from 'node:fs';
import * as path from 'node:path';
import { Database, Queryable } from './database';

const MIGRATIONS_DIR = path.resolve(__dirname, '../../../src/database/migrations');

export function migrationsDir(): string {
  // Compiled code runs from dist/src/database; sources stay in src/database/migrations.
  const beside = path.join(__dirname, 'migrations');
  return fs.existsSync(beside) ? beside : MIGRATIONS_DIR;
}

function migrationFiles(): string[] {
  return fs.readdirSync(migrationsDir()).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
}

/** Migrations this code has that the database has not applied (an instance older than its database has none). */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
  const done = new Set(rows.map((r) => r.name));
  return migrationFiles().filter((f) => !done.has(f));
}

/**
 * Applies src/database/migrations/NNNN_name.sql in order, each once, under an advisory
 * lock so two instances starting together do not race.
 */
export async function migrate(db: Database): Promise<string[]> {
  const dir = migrationsDir();
  const files = migrationFiles();
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['schema_migrations']);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await tx.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
  });
}
