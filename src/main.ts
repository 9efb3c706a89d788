import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { seedDemoAccount } from './accounts/demo-seed';
import { createApp } from './app';
import { ConfigError, loadSettings, Settings } from './config/settings';

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

async function main(): Promise<void> {
  const settings = loadSettings();
  const app = await createApp(settings);
  app.enableShutdownHooks();
  try {
    await app.listen(settings.port, settings.host);
  } catch (error) {
    throw listenError(error as NodeJS.ErrnoException, settings);
  }
  const stores = `${settings.databaseUrl ? 'Postgres server' : `embedded Postgres in ${settings.dataDir}`}, ${settings.s3 ? `S3 bucket ${settings.s3.bucket}` : 'local blob store'}`;
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
