import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AccountQueries } from './accounts/account-queries';
import { resolveAdminToken } from './admin/admin-token';
import { AppModule } from './app.module';
import { Settings } from './config/settings';
import { Database } from './database/database';
import { migrate } from './database/migrate';
import { openDatabase } from './database/open-database';
import { PostgresEventStore } from './event-store/postgres/postgres-event-store';
import { Metrics } from './metrics/metrics';
import { configureHttp, createHttpAdapter } from './platform/http';
import { ServiceLogger } from './platform/logger';
import { ProjectionRunner } from './projection-runner/projection-runner';

export interface AppOptions {
  /** Share an already open database (tests running two instances on one database). */
  database?: Database;
  logger?: false | ('log' | 'error' | 'warn')[] | LoggerService;
}

/**
 * Builds the whole service: migrations, event store, read models, HTTP. main.ts and the
 * tests both start the app through here, so they run the same stack.
 */
export async function createApp(base: Settings, options: AppOptions = {}): Promise<NestFastifyApplication> {
  const settings: Settings = Object.freeze({ ...base, adminToken: resolveAdminToken(base.dataDir, base.adminToken) });
  const database = options.database ?? (await openDatabase(settings));
  await migrate(database);
  const eventStore = new PostgresEventStore(database);
  await eventStore.start();

  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ settings, database, eventStore, ownsDatabase: !options.database }),
    createHttpAdapter(settings),
    { bodyParser: false, logger: options.logger ?? new ServiceLogger() },
  );
  configureHttp(app.getHttpAdapter().getInstance(), settings, { accounts: app.get(AccountQueries), adminToken: settings.adminToken! });
  app.get(Metrics).instrument(app.getHttpAdapter().getInstance());

  const projections = app.get(ProjectionRunner);
  await projections.prepare();
  if (settings.workers) await projections.start();

  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
