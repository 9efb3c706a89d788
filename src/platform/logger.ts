import { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import pino, { DestinationStream, Logger as Pino } from 'pino';
import type { Settings } from '../config/settings';

/** Nest's own start-up chatter: one line per module, route and controller. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * The service's one pino logger: a JSON line per record, pretty-printed (pino-pretty) only
 * when stdout is a terminal, at LOG_LEVEL. Records never carry request headers (the
 * request serializer keeps method and URL), so no API key or signing secret reaches a log.
 */
export function createPino(settings: Settings, destination?: DestinationStream): Pino {
  const options: pino.LoggerOptions = {
    level: settings.logLevel,
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: { req: (req: IncomingMessage) => ({ method: req.method, url: req.url }), res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }) },
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY) return pino({ ...options, transport: { target: 'pino-pretty', options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' } } });
  return pino(options);
}

/**
 * Nest's LoggerService over nestjs-pino's logger, without Nest's per-route start-up lines.
 * Inside a request, nestjs-pino binds the request id to every record (AsyncLocalStorage).
 */
export class ServiceLogger implements LoggerService {
  constructor(private readonly inner: LoggerService) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context)) return;
    this.inner.log(message, ...rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.inner.error(message, ...rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.inner.warn(message, ...rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.inner.debug?.(message, ...rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.inner.verbose?.(message, ...rest);
  }
}

/**
 * One line per request, when its response is sent: written from Fastify's onResponse hook
 * rather than pino-http's middleware because a request refused before the body is read
 * (401 in the onRequest hook) never reaches Nest's middleware, and must be logged too.
 */
export function logRequests(fastify: FastifyInstance, logger: Pino): void {
  fastify.addHook('onResponse', async (request, reply) => {
    const record = {
      request_id: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      account_id: request.auth?.accountId ?? null,
      mode: request.auth?.mode ?? null,
    };
    if (reply.statusCode >= 500) logger.warn(record, 'request failed');
    else logger.info(record, 'request');
  });
}
