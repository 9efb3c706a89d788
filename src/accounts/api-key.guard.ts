import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { parseApiKey } from './api-key-secret';
import type { ApiKeyRecord } from './account-queries';
import { KeptAccounts } from './kept-accounts';
import { Errors } from '../platform/errors';
import { AuthContext, keyAllows, REQUIRED_SCOPES, WITHOUT_API_KEY } from '../platform/auth/auth-context';

/**
 * Who the bearer API key in an Authorization header belongs to; throws the 401 errors.
 * Runs before the body is read (see configureHttp) and, for routes outside /v1, in the guard.
 */
export function authenticateApiKey(header: string | undefined, accounts: KeptAccounts): AuthContext | Promise<AuthContext> {
  const match = typeof header === 'string' ? /^Bearer(?: +(.*))?$/i.exec(header.trim()) : null;
  const token = match?.[1]?.trim();
  if (!token) throw Errors.missingCredentials();

  const parsed = parseApiKey(token);
  if (!parsed) throw Errors.invalidKey('The API key is malformed: expected svc_test_ or svc_live_ followed by 40 letters and digits.');
  // A kept key answers at once, without a promise (every request of a busy caller); else it is read.
  const kept = accounts.keptKeyMatching(parsed.lookupId, parsed.secret);
  if (kept) return authContextOf(kept);
  return accounts.keyMatching(parsed.lookupId, parsed.secret).then(authContextOf);
}

/** Throws the 401 errors (no key, revoked, expired) or answers who the key is. */
function authContextOf(key: ApiKeyRecord | undefined): AuthContext {
  if (!key) throw Errors.invalidKey('Unknown API key.');
  if (key.revoked_at) throw Errors.invalidKey('This API key has been revoked.');
  if (key.expires_at && new Date(key.expires_at).getTime() <= Date.now()) throw Errors.invalidKey('This API key has expired.');

  return { accountId: key.account_id, keyId: key.id, mode: key.mode, tier: key.tier, scopes: key.scopes, active: key.active, expiresAt: key.expires_at };
}

/**
 * The one API key check (spec part 5), applied to every route not marked @WithoutApiKey.
 * Keys are kept in process and changed by their events (KeptAccounts), so a revocation
 * bites on every instance as soon as its event reaches it; expiry is checked here, on
 * every request.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly accounts: KeptAccounts,
  ) {}

  /** The key is read in the onRequest hook for /v1 routes (request.auth is then set), else here. */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(WITHOUT_API_KEY, targets)) return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();

    request.auth ??= await authenticateApiKey(request.headers.authorization, this.accounts);
    const key = request.auth;

    const required = this.reflector.getAllAndOverride<string[] | undefined>(REQUIRED_SCOPES, targets);
    if (!keyAllows(key, required)) throw Errors.scopeRequired(required!);
    return true;
  }
}
