import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Mode } from '../mode';

/** Who is calling: set on the request by the API key guard. */
export interface AuthContext {
  accountId: string;
  keyId: string;
  mode: Mode;
  tier: 'free' | 'premium';
  scopes: string[];
  /** False for a live premium key whose activation checkout is not complete. */
  active: boolean;
  /** When the key stops working (ISO 8601), null: never; shown on GET /v1/me. */
  expiresAt?: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

export const REQUIRED_SCOPES = 'required_scopes';
export const WITHOUT_API_KEY = 'without_api_key';

/** True when the key carries one of the scopes (a key with none is unrestricted and carries all). */
export function keyAllows(key: Pick<AuthContext, 'scopes'>, required: readonly string[] | undefined): boolean {
  return !required?.length || !key.scopes.length || required.some((s) => key.scopes.includes(s));
}

/** The key must carry one of these scopes (an unrestricted key carries all). */
export const RequireScope = (...scopes: string[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** Routes with their own authentication (operator API, processor webhooks, hosted pages). */
export const WithoutApiKey = () => SetMetadata(WITHOUT_API_KEY, true);

/** The caller's AuthContext in a controller method. */
export const Auth = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  return ctx.switchToHttp().getRequest().auth;
});
