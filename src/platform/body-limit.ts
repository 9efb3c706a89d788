import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';

/**
 * A route's own body limit, below the server's BODY_LIMIT_BYTES: a body declared larger is
 * refused with 413 before a byte of it is read, and a chunked one as soon as it passes the limit.
 */
export const BodyLimit = (bytes: number) => RouteConfig({ bodyLimit: bytes });

/** Applies @BodyLimit as Fastify's own per-route bodyLimit; must run before the routes are registered. */
export function applyRouteBodyLimits(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const limit = (route.config as { bodyLimit?: unknown } | undefined)?.bodyLimit;
    if (typeof limit === 'number') route.bodyLimit = limit;
  });
}
