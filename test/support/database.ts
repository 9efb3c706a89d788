import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { Database } from '../../src/database/database';
import { migrate, migrationsDir } from '../../src/database/migrate';
import { PgliteDatabase } from '../../src/database/pglite-database';
import { PostgresDatabase } from '../../src/database/postgres-database';
import { ReadModelBuilds } from '../../src/projection-runner/read-model-builds';
import { ALL_PROJECTIONS } from '../../projections';

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
 * `readModels`: with every projection's first build already made, as the service's first
 * start makes them (what a test app starts on).
 */
export async function createTestDatabase(options: { readModels?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    // Already migrated: the dump is named by a hash of what went into it.
    const db = await PgliteDatabase.open(undefined, options.readModels ? servedPglite() : migratedPglite());
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
 * An empty PGlite cluster, for suites that bring their own tables (projection specs): opened
 * from a dump like a migrated one, which skips initdb's ~1.5 s.
 */
export async function emptyPglite(): Promise<PgliteDatabase> {
  return PgliteDatabase.open(undefined, clusterImage('empty', async () => undefined));
}

/**
 * Postgres settings of every test cluster, kept in its dump (postgresql.auto.conf). PGlite's
 * default shared_buffers of 128MB is set up on every open: a test cluster holds a few MB,
 * and with 16MB an open takes ~20% less CPU (docs/performance.md).
 */
const TEST_CLUSTER_SETTINGS = "ALTER SYSTEM SET shared_buffers = '16MB'";

/** A cluster's dump in memory per test file, keyed by what went into it (see clusterImage). */
const images = new Map<string, Blob>();

/**
 * A freshly made PGlite cluster (`prepare` applied to it), dumped once per content and shared
 * by every test file and jest worker through a file: a new cluster costs ~1.5 s of initdb,
 * loading the dump ~0.5 s, and the suites open well over a hundred.
 */
function clusterImage(name: string, prepare: (db: PgliteDatabase) => Promise<unknown>, content = ''): Blob {
  const key = `${name}-${createHash('sha256').update(TEST_CLUSTER_SETTINGS + content).digest('hex').slice(0, 16)}`;
  let image = images.get(key);
  if (!image) {
    image = tarImage(path.join(os.tmpdir(), `svc-test-pglite-${key}.tar`), prepare);
    images.set(key, image);
  }
  return image;
}

/**
 * PGlite reads a dump only through `arrayBuffer()` and copies each file out of it; a Blob
 * copies all 40 MB on every call (~0.3 s of CPU a database), so this hands over the bytes
 * read from the file once, as they are.
 */
function tarImage(file: string, prepare: (db: PgliteDatabase) => Promise<unknown>): Blob {
  let bytes: Promise<ArrayBuffer> | undefined;
  const read = async (): Promise<ArrayBuffer> => {
    if (!fs.existsSync(file)) {
      const db = await PgliteDatabase.open();
      await db.exec(TEST_CLUSTER_SETTINGS);
      await prepare(db);
      const dump = Buffer.from(await (await db.dump()).arrayBuffer());
      await db.close();
      // Written aside and renamed, so a worker never reads half a file another one is writing.
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(partial, dump);
      fs.renameSync(partial, file);
    }
    const buffer = fs.readFileSync(file);
    return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
  };
  return { type: 'application/x-tar', arrayBuffer: () => (bytes ??= read()) } as unknown as Blob;
}

/** The migrations' files, named and read (once a file): what a migrated cluster is made of. */
let migrations: string | undefined;
function migrationsContent(): string {
  return (migrations ??= readMigrations());
}

function readMigrations(): string {
  const dir = migrationsDir();
  const parts: string[] = [];
  for (const file of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const full = path.join(dir, file);
    if (fs.statSync(full).isFile()) parts.push(file, fs.readFileSync(full, 'utf8'));
  }
  return parts.join('\0');
}

let migrated: Blob | undefined;
function migratedPglite(): Blob {
  return (migrated ??= clusterImage('migrated', migrate, migrationsContent()));
}

/** Migrated, and every read model's build made: the DDL of an app's first start, done once. */
async function buildReadModels(db: Database): Promise<void> {
  await migrate(db);
  await new ReadModelBuilds(db).prepareAll(ALL_PROJECTIONS);
}

function readModelsContent(): string {
  return ALL_PROJECTIONS.map((p) => [p.name, p.version, p.tables.join(','), p.schema].join('\0')).join('\0');
}

let served: Blob | undefined;
function servedPglite(): Blob {
  return (served ??= clusterImage('served', buildReadModels, migrationsContent() + readModelsContent()));
}
