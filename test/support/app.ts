import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import type { DestinationStream } from 'pino';
import * as os from 'node:os';
import * as path from 'node:path';
import { createApp } from '../../src/app';
import { loadSettings, S3Settings } from '../../src/config/settings';
import { Database } from '../../src/database/database';
import { createTestDatabase, TestDatabase } from './database';
import { EsdbStandIn } from './esdb-standin';
import { onExternalS3, startS3Server, S3TestServer } from '../storage/s3-server';

export const ADMIN_TOKEN = 'test-admin-token';

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
  /** The body as bytes (storage answers carry binary files). */
  bytes: Buffer;
}

export interface TestApp {
  app: NestFastifyApplication;
  db: Database;
  dataDir: string;
  /** An HTTP request through the whole stack (Fastify inject, no socket). */
  request(method: string, url: string, options?: { key?: string; body?: unknown; headers?: Record<string, string>; payload?: string | Buffer }): Promise<Response>;
  /**
   * A request to a signed storage URL the API handed out: the local store's are answered by
   * the app itself (Fastify inject), an S3 server's (X-Amz-Signature) over HTTP.
   */
  storage(method: 'GET' | 'PUT', url: string, options?: { payload?: string | Buffer; headers?: Record<string, string> }): Promise<Response>;
  /** The app's S3 settings (TEST_S3=1, or S3 passed in env); undefined on the local store. */
  s3?: S3Settings;
  /** A call of the operator API with the admin token. */
  admin(method: string, url: string, body?: unknown): Promise<Response>;
  /** A new account and one key for it; returns the secret key. */
  accountWithKey(options?: { mode?: 'test' | 'live'; tier?: 'free' | 'premium'; scopes?: string[]; name?: string }): Promise<{ accountId: string; key: string; keyId: string }>;
  close(): Promise<void>;
}

let counter = 0;

/**
 * A service started once per test database and kept as long as it (however a suite ends it),
 * so instances sharing a database share it too, as they would share a server.
 */
const perDatabase = new WeakMap<TestDatabase, Map<string, Promise<unknown>>>();
function onceFor<T>(database: TestDatabase, name: string, start: () => Promise<T>, stop: (started: T) => Promise<void>): Promise<T> {
  const kept = perDatabase.get(database) ?? new Map<string, Promise<unknown>>();
  perDatabase.set(database, kept);
  if (!kept.has(name)) {
    const starting = start();
    kept.set(name, starting);
    const drop = database.drop.bind(database);
    database.drop = async () => {
      await drop();
      await stop(await starting);
    };
  }
  return kept.get(name) as Promise<T>;
}

/**
 * TEST_EVENTSTORE=standin runs the service's events through the real EventStoreDB client
 * to an in-process stand-in, one per test database. Suites that start the service in a
 * child process pass it on with eventStoreEnv(database).
 */
export async function eventStoreEnv(database: TestDatabase): Promise<Record<string, string>> {
  if (process.env.TEST_EVENTSTORE !== 'standin') return {};
  const standIn = await onceFor(database, 'eventstore', () => new EsdbStandIn().start(), (started) => started.stop());
  return { EVENTSTORE_URL: standIn.url };
}

/**
 * TEST_S3=1 (the S3 pass of .ci/run) puts the service's storage on the external S3 server
 * named in the environment: one bucket per test database, so suites side by side never
 * share a key.
 */
export async function storageEnv(database: TestDatabase): Promise<Record<string, string>> {
  if (!onExternalS3) return {};
  const server = await onceFor<S3TestServer>(database, 'storage', () => startS3Server(), (started) => started.close());
  return server.env;
}

/**
 * The built service (dist/src/main.js) as a worker process on `database`'s server, with its
 * events where the suite's are: for suites that SIGKILL one (two processes cannot share PGlite).
 */
export async function spawnWorker(database: TestDatabase, dataDir: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  return spawn(process.execPath, [path.resolve('dist/src/main.js')], {
    env: { ...process.env, ...(await eventStoreEnv(database)), DATABASE_URL: database.url!, DATA_DIR: dataDir, ADMIN_TOKEN, PORT: '0', WORKERS: 'true', ...env },
    stdio: 'ignore',
  });
}

/**
 * Starts the service on a fresh database (or on `shared`, as a second instance would).
 * localStore keeps the local blob store in the S3 pass too (suites about that store itself).
 */
export async function startTestApp(
  options: { shared?: TestDatabase; env?: Record<string, string>; logDestination?: DestinationStream; localStore?: boolean } = {},
): Promise<TestApp & { database: TestDatabase }> {
  const database = options.shared ?? (await createTestDatabase({ readModels: true }));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const env = {
    DATA_DIR: dataDir,
    ADMIN_TOKEN,
    ...(await eventStoreEnv(database)),
    ...(options.localStore ? {} : await storageEnv(database)),
    ...options.env,
  };
  const settings = loadSettings(env);
  // The service's pino logger only where a test reads the log; elsewhere errors only, on the console.
  const app = await createApp(settings, options.logDestination ? { database: database.db, logDestination: options.logDestination } : { database: database.db, logger: ['error'] });
  const fastify = app.getHttpAdapter().getInstance();

  const request: TestApp['request'] = async (method, url, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
    let payload = o.payload;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fastify.inject({ method: method as any, url, headers, payload });
    let body: any;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers as Response['headers'], body, text: res.body, bytes: res.rawPayload };
  };

  const storage: TestApp['storage'] = async (method, url, o = {}) => {
    const u = new URL(url);
    if (!u.searchParams.has('X-Amz-Signature')) {
      const headers = o.payload === undefined ? o.headers : { 'content-type': 'application/octet-stream', ...o.headers };
      return request(method, `${u.pathname}${u.search}`, { payload: o.payload, headers });
    }
    const res = await fetch(url, { method, body: o.payload, headers: o.headers });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: Object.fromEntries(res.headers), body: undefined, text: bytes.toString('utf8'), bytes };
  };

  const admin: TestApp['admin'] = (method, url, body) =>
    request(method, url, { body, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  return {
    app,
    db: database.db,
    database,
    dataDir,
    request,
    storage,
    s3: settings.s3,
    admin,
    async accountWithKey(o = {}) {
      const n = ++counter;
      const account = await admin('POST', '/admin/accounts', { name: o.name ?? `Account ${n}`, email: `a${n}@example.com` });
      if (account.status !== 201) throw new Error(`account create failed: ${account.text}`);
      const key = await admin('POST', '/admin/keys', { account: account.body.id, mode: o.mode ?? 'test', tier: o.tier ?? 'free', scopes: o.scopes ?? [] });
      if (key.status !== 201) throw new Error(`key create failed: ${key.text}`);
      return { accountId: account.body.id, key: key.body.key, keyId: key.body.id };
    },
    async close() {
      await app.close();
      if (!options.shared) await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
