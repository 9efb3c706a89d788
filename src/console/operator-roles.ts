import type { OperatorRole } from '../platform/auth/operator';

/**
 * Which operator role a console page or action needs besides admin, by path prefix (the first
 * that matches), as the operator API's routes do (platform/auth/operator.ts): the ledger is
 * finance's; read models, webhooks and keys are operations'; granting credits is admin's;
 * the overview and the event log are every operator's.
 */
const PAGE_ROLES: readonly [prefix: string, role: OperatorRole | 'any'][] = [
  ['/console/ledger', 'finance'],
  ['/console/read-models', 'operations'],
  ['/console/webhooks', 'operations'],
  ['/console/keys/', 'operations'],
  ['/console/accounts/:id/credits', 'admin'],
  ['/console/accounts', 'operations'],
];

/** The role a console path pattern needs; 'any': every operator may. */
export function consoleRoleFor(path: string): OperatorRole | 'any' {
  const under = (prefix: string) => (prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`));
  return PAGE_ROLES.find(([prefix]) => under(prefix))?.[1] ?? 'any';
}
