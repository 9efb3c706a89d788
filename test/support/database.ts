import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { Database } from '../../src/database/database';
import { migrate, migrationsDir } from '../../src/database/migrate';
import { PgliteDatabase } from '../../src/database/pglite-database';
import { PostgresDatabase } from '../../src/database/postgres-database';

export interface TestDatabase {
  db: Database;
  /** Connection string of the per-test database (Postgres server only). */
  url?: string;
  drop(): Promise<void>;
}

export const onPostgresServer = Boolean(process.env.DATABASE_URL);

/**
 * A fresh, migrated database for one test file: a new database on the server named by
 * DATABASE_URL, or an in-memory PGlite. The xmin horizon is cluster-wide, so tests that
 * hold transactions open must not expect other files to be quiet; none do.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    // Already migrated: the dump is named by a hash of the migration files.
    const db = await PgliteDatabase.open(undefined, await migratedPglite());
    return { db, drop: () => db.close() };
  }
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = new PostgresDatabase(url.toString());
  await migrate(db);
  return {
    db,
    url: url.toString(),
    drop: async () => {
      await db.close();
      const cleanup = new Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/**
 * A freshly migrated PGlite cluster, dumped once per set of migrations and shared by every
 * test file and jest worker through a file: a new cluster costs ~1.5 s of initdb, loading the
 * dump ~0.4 s, and the suites open well over a hundred.
 */
async function migratedPglite(): Promise<Blob> {
  const hash = createHash('sha256');
  const dir = migrationsDir();
  for (const file of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, file);
    if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full));
  }
  const template = path.join(os.tmpdir(), `svc-test-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
  if (!fs.existsSync(template)) {
    const db = await PgliteDatabase.open();
    await migrate(db);
    const dump = Buffer.from(await (await db.dump()).arrayBuffer());
    await db.close();
    // Written aside and renamed, so a worker never reads half a file another one is writing.
    const partial = `${template}.${process.pid}.${randomBytes(4).toString('hex')}`;
    fs.writeFileSync(partial, dump);
    fs.renameSync(partial, template);
  }
  return new Blob([fs.readFileSync(template)]);
}
