import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';
import { setActor } from '../request-context';
import { assertOperatorMay, OPERATOR_AUTHENTICATOR, OperatorAuthenticator } from './operator';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The bearer token of an Authorization header, or a 401 missing_credentials. */
export function operatorBearer(header: string | undefined): string {
  const token = typeof header === 'string' ? /^Bearer +(.+)$/i.exec(header.trim())?.[1]?.trim() : undefined;
  if (!token) throw new ApiError(401, 'missing_credentials', 'The operator API needs "Authorization: Bearer <operator token>" (an operator\'s token, or ADMIN_TOKEN).');
  return token;
}

/** A constant-time check of a token against the bootstrap ADMIN_TOKEN (comparing digests: any length). */
export function isAdminToken(adminToken: string): (token: string) => boolean {
  const expected = digest(adminToken);
  return (token) => timingSafeEqual(digest(token), expected);
}

/**
 * The operator API takes an operator's token (or the bootstrap ADMIN_TOKEN, operator `admin`),
 * and each route is open to the roles roleForRoute names (403 operator_role_forbidden).
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(@Inject(OPERATOR_AUTHENTICATOR) private readonly authenticate: OperatorAuthenticator) {}

  /** Also checked in the onRequest hook, before the body is read; kept here for every /admin handler. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    request.operator ??= await this.authenticate(request.headers.authorization);
    setActor({ type: 'operator', id: request.operator.name });
    assertOperatorMay(request.operator, request.routeOptions.url ?? request.url);
    return true;
  }
}
