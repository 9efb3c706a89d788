import { ConsoleLogger } from '@nestjs/common';

/** Nest's own start-up chatter: one line per module, route and controller. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * The service's logger: Nest's console logger without its per-route start-up lines, in
 * colour only on a terminal (a log file or collector gets no ANSI codes).
 */
export class ServiceLogger extends ConsoleLogger {
  constructor() {
    super({ colors: Boolean(process.stdout.isTTY) });
  }

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context)) return;
    super.log(message, ...rest);
  }
}
