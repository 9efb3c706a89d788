import 'reflect-metadata';
import { INestApplication, Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import * as net from 'node:net';
import { seedDemoAccount } from './accounts/demo-seed';
import { createApp } from './app';
import { ConfigError, loadSettings, redactUrl, Settings } from './config/settings';

/** Why the listener could not start, naming the setting to change. */
function listenError(error: NodeJS.ErrnoException, settings: Settings): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(`PORT ${settings.port} is already in use on ${settings.host}: stop the other process or set PORT`);
    case 'EACCES':
      return new ConfigError(`PORT ${settings.port} needs privileges this process does not have: set PORT above 1023`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`HOST "${settings.host}" is not an address of this machine: set HOST (e.g. 127.0.0.1 or 0.0.0.0)`);
    default:
      return error;
  }
}

/**
 * Binds the listen address for a moment and lets it go: a port in use or a HOST that is not
 * this machine's fails the start at once, before the database is opened and the workers
 * start on events in a process that would then exit. (Taken in between, listen says so too.)
 */
async function assertListenable(settings: Settings): Promise<void> {
  const probe = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(settings.port, settings.host, resolve);
    });
  } catch (error) {
    throw listenError(error as NodeJS.ErrnoException, settings);
  } finally {
    await new Promise((resolve) => probe.close(resolve));
  }
}

/** How long SIGTERM waits for requests in flight and workers' batches before giving up. */
const SHUTDOWN_GRACE_MS = 25_000;

/**
 * SIGTERM or SIGINT: stop accepting connections, let requests in flight and the workers'
 * current batches finish, release leases, close the pools, exit 0 (1 if that takes longer
 * than the grace period or fails). Nest's own shutdown hooks would re-raise the signal.
 */
function stopOnSignals(app: INestApplication): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    new Logger('Main').log(`${signal}: finishing what is in flight, then stopping`);
    setTimeout(() => {
      process.stderr.write(`stopping took longer than ${SHUTDOWN_GRACE_MS} ms; exiting\n`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    // Connections that finish their request after the listener closed stay open for their
    // keep-alive time, and the server's close waits for them: close each as it goes idle.
    const server: Server = app.getHttpServer();
    setInterval(() => server.closeIdleConnections(), 100).unref();
    app.close().then(
      () => process.exit(0),
      (error) => {
        process.stderr.write(`stopping failed: ${error?.message ?? error}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function main(): Promise<void> {
  const settings = loadSettings();
  await assertListenable(settings);
  const app = await createApp(settings);
  stopOnSignals(app);
  try {
    await app.listen(settings.port, settings.host);
  } catch (error) {
    throw listenError(error as NodeJS.ErrnoException, settings);
  }
  const events = settings.eventStoreUrl ? `events in EventStoreDB at ${redactUrl(settings.eventStoreUrl)}, ` : '';
  const stores = `${events}${settings.databaseUrl ? 'Postgres server' : `embedded Postgres in ${settings.dataDir}`}, ${settings.s3 ? `S3 bucket ${settings.s3.bucket}` : 'local blob store'}`;
  new Logger('Main').log(`serving ${settings.publicBaseUrl}/v1 (${stores}; workers ${settings.workers ? 'on' : 'off'})`);
  // Only once it listens: a key printed by a process that then dies would point at another one.
  if (!settings.databaseUrl && settings.nodeEnv !== 'production') {
    const demo = await seedDemoAccount(app);
    if (demo) {
      process.stdout.write(
        `\nCreated the demo account with an unrestricted premium test key (shown once):\n\n    ${demo.key}\n\n` +
          `Try:  curl -H "Authorization: Bearer ${demo.key}" ${settings.publicBaseUrl}/v1/me\n\n`,
      );
    }
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof ConfigError ? 'configuration error: ' : ''}${error?.message ?? error}\n`);
  process.exit(1);
});
