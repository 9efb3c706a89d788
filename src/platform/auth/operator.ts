import { ApiError } from '../errors';

export const OPERATOR_ROLES = ['finance', 'operations', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** The operator behind an /admin request or a console session. */
export interface OperatorContext {
  /** A named operator's name, or `admin` for the bootstrap ADMIN_TOKEN. */
  name: string;
  role: OperatorRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    operator?: OperatorContext;
  }
}

/** Who the bearer operator token in an Authorization header belongs to; throws the 401 errors. */
export type OperatorAuthenticator = (header: string | undefined) => Promise<OperatorContext>;

/** Provided by the operators context (a global module): what AdminGuard checks tokens with. */
export const OPERATOR_AUTHENTICATOR = Symbol('OperatorAuthenticator');

/**
 * Which role an operator route needs, by path prefix (the first that matches); admin may do
 * everything, and a route listed nowhere is admin's alone (accounts, credits, prices, usage,
 * factory jobs, operators). Kept in one table, checked before the body is read, so that a
 * new route is admin's until it is given to a role here (docs/operations.md).
 */
const ROUTE_ROLES: readonly [prefix: string, role: Exclude<OperatorRole, 'admin'>][] = [
  ['/admin/purchases/', 'finance'],
  ['/admin/disputes', 'finance'],
  ['/admin/payouts/', 'finance'],
  ['/admin/ledger/', 'finance'],
  ['/admin/projections', 'operations'],
  ['/admin/webhook_endpoints', 'operations'],
  ['/admin/webhook_deliveries', 'operations'],
  ['/admin/keys', 'operations'],
  ['/metrics', 'operations'],
];

/** The role a route (Fastify's route pattern, e.g. "/admin/purchases/:id/refund") needs besides admin. */
export function roleForRoute(route: string): OperatorRole {
  const under = (prefix: string) => (prefix.endsWith('/') ? route.startsWith(prefix) : route === prefix || route.startsWith(`${prefix}/`));
  return ROUTE_ROLES.find(([prefix]) => under(prefix))?.[1] ?? 'admin';
}

export function roleAllows(operator: OperatorContext, needed: OperatorRole): boolean {
  return operator.role === 'admin' || operator.role === needed;
}

/** 403 operator_role_forbidden, naming the role the route needs. */
export function assertOperatorMay(operator: OperatorContext, route: string): void {
  const needed = roleForRoute(route);
  if (roleAllows(operator, needed)) return;
  throw new ApiError(
    403,
    'operator_role_forbidden',
    `Operator "${operator.name}" has the role ${operator.role}; this needs the role ${needed}${needed === 'admin' ? '' : ' or admin'}.`,
    { role_required: needed, role: operator.role },
  );
}
