import { CanActivate, ExecutionContext, Injectable, SetMetadata, Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { FastifyRequest } from 'fastify';
import { unknownParameter, validationAnswer } from './validation-answer';

const QUERY_PARAMETERS = 'query_parameters';

/**
 * The query parameters of a handler that takes the whole query object (`@Query() query`)
 * and parses it itself (the catalog's search facets, the created filters). A handler that
 * names its parameters (`@Query('limit')`) declares them by that alone.
 */
export const QueryParameters = (...names: string[]) => SetMetadata(QUERY_PARAMETERS, names);

/** What a handler takes: its query parameter names, and whether it reads a body at all. */
export interface HandlerParameters {
  query: readonly string[];
  takesBody: boolean;
}

interface RouteArg {
  index: number;
  data?: unknown;
}

const known = new WeakMap<object, HandlerParameters>();

/**
 * A handler's parameters from its own declarations: the names of its @Query('name')
 * arguments, or its @QueryParameters list when it takes the whole query; whether it has a
 * @Body argument. A whole-query handler with no list is a programming error (it would accept
 * anything), refused on its first request.
 */
export function handlerParameters(controller: Type, handler: (...args: unknown[]) => unknown): HandlerParameters {
  const cached = known.get(handler);
  if (cached) return cached;
  const args: Record<string, RouteArg> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {};
  const of = (type: RouteParamtypes) => Object.entries(args).filter(([key]) => key.split(':')[0] === String(type)).map(([, arg]) => arg);
  const queries = of(RouteParamtypes.QUERY);
  const declared: string[] | undefined = Reflect.getMetadata(QUERY_PARAMETERS, handler);
  const whole = queries.some((arg) => typeof arg.data !== 'string');
  if (whole && !declared) throw new Error(`${controller.name}.${handler.name} takes the whole query: list its parameters with @QueryParameters`);
  const names = new Set<string>(declared ?? []);
  for (const arg of queries) if (typeof arg.data === 'string') names.add(arg.data);
  const parameters = { query: [...names], takesBody: of(RouteParamtypes.BODY).length > 0 || of(RouteParamtypes.REQUEST).length > 0 };
  known.set(handler, parameters);
  return parameters;
}

/** 400 `validation_failed` naming every query parameter not in `names` (`Unknown parameter "tittle".`). */
export function assertKnownQuery(query: unknown, names: readonly string[]): void {
  const unknown = Object.keys((query ?? {}) as object).filter((name) => !names.includes(name));
  if (unknown.length) throw validationAnswer(unknown.map(unknownParameter));
}

/**
 * Strict parameters (issue 39): on /v1 and /admin, a query parameter the handler does not
 * declare, or a body field sent to a handler that reads no body, is 400 naming it, rather than
 * ignored (a typo in a filter answered the whole unfiltered list). Bodies of handlers that
 * read one are the ValidationPipe's (forbidNonWhitelisted) or the handler's own. Runs after
 * the API key guard, so a caller without the scope learns nothing about parameters.
 */
@Injectable()
export class KnownParametersGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const route = request.routeOptions?.url ?? '';
    if (!route.startsWith('/v1/') && !route.startsWith('/admin/')) return true;
    const parameters = handlerParameters(context.getClass(), context.getHandler() as (...args: unknown[]) => unknown);
    assertKnownQuery(request.query, parameters.query);
    const body = request.body;
    if (!parameters.takesBody && body && typeof body === 'object' && Object.keys(body).length) {
      throw validationAnswer(Object.keys(body).map(unknownParameter));
    }
    return true;
  }
}
