import { LoggerService } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import pino, { DestinationStream, Logger as Pino } from 'pino';
import type { Settings } from '../config/settings';
import { currentRequestId, runInRequestContext } from './request-context';

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
 * Runs the rest of each request's handling inside its context (request-context.ts), so that
 * a record written while it is handled carries its request id, and an event appended its
 * actor. A Fastify hook, not Nest middleware with a child logger per request (nestjs-pino):
 * the id is only looked up when something is written (issue 27 profile: the child loggers and the middleware bridge were ~5% of a
 * GET /v1/me's CPU).
 */
export function bindRequestContext(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, _reply, done) => runInRequestContext(request.id, done));
}

type Level = 'info' | 'error' | 'warn' | 'debug' | 'trace';

/**
 * Nest's LoggerService over the service's pino logger, without Nest's per-route start-up
 * lines. Nest calls it as (message, ...params, context): the context (a class name) and,
 * inside a request, its request id go on the record; an error's stack, which Nest passes
 * as the first param, too.
 */
export class ServiceLogger implements LoggerService {
  constructor(private readonly pino: Pino) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context)) return;
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    const record: Record<string, unknown> = {};
    if (rest.length && typeof rest[rest.length - 1] === 'string') record.context = rest.pop();
    const requestId = currentRequestId();
    if (requestId) record.request_id = requestId;
    if (level === 'error' && typeof rest[0] === 'string' && rest[0].includes('\n    at ')) record.stack = rest.shift();
    if (message instanceof Error) this.pino[level]({ ...record, err: message }, message.message);
    else if (message !== null && typeof message === 'object') this.pino[level]({ ...record, ...message });
    else this.pino[level](record, String(message));
  }
}

/**
 * One line per request, when its response is sent: written from Fastify's onResponse hook
 * rather than pino-http's middleware because a request refused before the body is read
 * (401 in the onRequest hook) never reaches Nest's middleware, and must be logged too.
 */
export function logRequests(fastify: FastifyInstance, logger: Pino): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!logger.isLevelEnabled(reply.statusCode >= 500 ? 'warn' : 'info')) return done();
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
    done();
  });
}
