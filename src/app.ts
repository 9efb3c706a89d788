import type { LoggerService } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { KeptAccounts } from './accounts/kept-accounts';
import { authenticateApiKey } from './accounts/api-key.guard';
import { OPENAPI_PATH } from './openapi/paths';
import { OperatorAuth } from './operators/operator-auth';
import { resolveAdminToken } from './admin/admin-token';
import { AppModule } from './app.module';
import { Settings } from './config/settings';
import { Database } from './database/database';
import { migrate } from './database/migrate';
import { openDatabase } from './database/open-database';
import { openEventStore } from './event-store/open-event-store';
import { IdempotentRequests } from './idempotency/idempotent-requests';
import { Metrics } from './metrics/metrics';
import { serveOpenApi } from './openapi/serve';
import { configureHttp, createHttpAdapter, registerCompression } from './platform/http';
import { bindRequestContext, createPino, logRequests, ServiceLogger } from './platform/logger';
import { ProjectionRunner } from './projection-runner/projection-runner';

export interface AppOptions {
  /** Share an already open database (tests running two instances on one database). */
  database?: Database;
  /** Nest's console logger instead of pino (tests); pino's request lines are then off. */
  logger?: false | ('log' | 'error' | 'warn')[] | LoggerService;
  /** Where pino writes (tests reading the log); default stdout. */
  logDestination?: DestinationStream;
}

/**
 * Builds the whole service: migrations, event store, read models, HTTP. main.ts and the
 * tests both start the app through here, so they run the same stack.
 */
export async function createApp(base: Settings, options: AppOptions = {}): Promise<NestFastifyApplication> {
  const settings: Settings = Object.freeze({ ...base, adminToken: resolveAdminToken(base.dataDir, base.adminToken) });
  const database = options.database ?? (await openDatabase(settings));
  await migrate(database);
  // Read models and checkpoints stay in `database` whichever store holds the events.
  const eventStore = await openEventStore(settings, database);

  const usePino = options.logger === undefined;
  const pino = createPino(usePino ? settings : { ...settings, logLevel: 'silent' }, options.logDestination);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ settings, database, eventStore, ownsDatabase: !options.database }),
    createHttpAdapter(settings),
    usePino ? { bodyParser: false, bufferLogs: true } : { bodyParser: false, logger: options.logger },
  );
  if (usePino) {
    app.useLogger(new ServiceLogger(pino));
    // What Nest buffered while booting goes out now (else only at listen(), which a test app never calls).
    app.flushLogs();
  }
  const accounts = app.get(KeptAccounts);
  const operators = app.get(OperatorAuth);
  bindRequestContext(app.getHttpAdapter().getInstance());
  // Before any route is added: the plugin wraps routes as they are registered.
  await registerCompression(app.getHttpAdapter().getInstance());
  configureHttp(app.getHttpAdapter().getInstance(), settings, {
    authenticateApiKey: (header) => authenticateApiKey(header, accounts),
    authenticateOperator: (header) => operators.authenticate(header),
    publicRoutes: [OPENAPI_PATH],
  });
  // After authentication (a key belongs to its caller), before any handler.
  app.get(IdempotentRequests).install(app.getHttpAdapter().getInstance());
  logRequests(app.getHttpAdapter().getInstance(), pino);
  app.get(Metrics).instrument(app.getHttpAdapter().getInstance());
  serveOpenApi(app);

  const projections = app.get(ProjectionRunner);
  await projections.prepare();
  if (settings.workers) await projections.start();

  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
