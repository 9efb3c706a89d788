import { createHash } from 'node:crypto';
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

/**
 * The database functions (the append, the read horizon), one file each in migrations/functions/,
 * defined once: a function's file is applied whenever its text changes, recorded in
 * schema_migrations under its name and a hash of its text (Flyway's repeatable migrations).
 */
function functionFiles(): { file: string; sql: string; name: string }[] {
  const dir = path.join(migrationsDir(), 'functions');
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((file) => {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return { file, sql, name: `functions/${file}@${createHash('sha256').update(sql).digest('hex').slice(0, 16)}` };
    });
}

/** Migrations (and function texts) this code has that the database has not applied (an instance older than its database has none). */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>('SELECT name FROM schema_migrations');
  const done = new Set(rows.map((r) => r.name));
  return [...migrationFiles(), ...functionFiles().map((f) => f.name)].filter((name) => !done.has(name));
}

/**
 * Applies src/database/migrations/NNNN_name.sql in order, each once, then every function
 * whose text changed, under an advisory lock so two instances starting together do not race.
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
    for (const { name, sql } of functionFiles()) {
      if (done.has(name)) continue;
      await tx.exec(sql);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
    }
    return applied;
  });
}
