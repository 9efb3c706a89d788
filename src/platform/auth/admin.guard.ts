import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { SETTINGS, Settings } from '../../config/settings';
import { ApiError } from '../errors';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** A check of the operator token in an Authorization header; throws the 401 errors. */
export function adminTokenCheck(adminToken: string): (header: string | undefined) => void {
  const expected = digest(adminToken);
  return (header) => {
    const token = typeof header === 'string' ? /^Bearer +(.+)$/i.exec(header.trim())?.[1] : undefined;
    if (!token) throw new ApiError(401, 'missing_credentials', 'The operator API needs "Authorization: Bearer <ADMIN_TOKEN>".');
    // Comparing digests keeps the comparison constant-time whatever the token length.
    if (!timingSafeEqual(digest(token), expected)) throw new ApiError(401, 'invalid_admin_token', 'The admin token is not valid.');
  };
}

/** The operator API takes "Authorization: Bearer <ADMIN_TOKEN>", compared in constant time. */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly check: (header: string | undefined) => void;

  constructor(@Inject(SETTINGS) settings: Settings) {
    if (!settings.adminToken) throw new Error('the admin token must be resolved before the app starts');
    this.check = adminTokenCheck(settings.adminToken);
  }

  /** Also checked in the onRequest hook, before the body is read; kept here for every /admin handler. */
  canActivate(context: ExecutionContext): boolean {
    this.check(context.switchToHttp().getRequest<FastifyRequest>().headers.authorization);
    return true;
  }
}
