import { Inject, Injectable } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { isAdminToken, operatorBearer } from '../platform/auth/admin.guard';
import type { OperatorContext } from '../platform/auth/operator';
import { ApiError } from '../platform/errors';
import { BOOTSTRAP_OPERATOR } from '../platform/request-context';
import { OperatorQueries } from './operator-queries';
import { hashOperatorToken } from './operator-token';

const invalid = (why: string) => new ApiError(401, 'invalid_admin_token', why, {}, { 'www-authenticate': 'Bearer' });

/**
 * Which operator a token is: the bootstrap ADMIN_TOKEN is the operator `admin` (role admin),
 * any other is looked up by its hash in the operators read model on every request, so a
 * revocation bites as soon as its event is applied (the revoking request waits for that).
 */
@Injectable()
export class OperatorAuth {
  private readonly isBootstrap: (token: string) => boolean;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly operators: OperatorQueries,
  ) {
    if (!settings.adminToken) throw new Error('the admin token must be resolved before the app starts');
    this.isBootstrap = isAdminToken(settings.adminToken);
  }

  /** From an Authorization header; throws the 401 errors. */
  authenticate(header: string | undefined): Promise<OperatorContext> {
    return this.ofToken(operatorBearer(header));
  }

  async ofToken(token: string): Promise<OperatorContext> {
    if (this.isBootstrap(token)) return { name: BOOTSTRAP_OPERATOR, role: 'admin' };
    if (!token.startsWith('op_')) throw invalid('The admin token is not valid.');
    const operator = await this.operators.byTokenHash(hashOperatorToken(token));
    if (!operator) throw invalid('The admin token is not valid.');
    if (operator.revoked_at) throw invalid(`The token of operator "${operator.name}" was revoked.`);
    return { name: operator.name, role: operator.role };
  }

  /**
   * An operator signed in at `since` (a console session), as they are now: undefined once
   * their token was revoked, or replaced by one issued after the sign-in. The bootstrap
   * operator always is.
   */
  async stillActive(name: string, since: Date): Promise<OperatorContext | undefined> {
    if (name === BOOTSTRAP_OPERATOR) return { name, role: 'admin' };
    const operator = await this.operators.byName(name);
    if (!operator || operator.revoked_at || new Date(operator.created_at) > since) return undefined;
    return { name: operator.name, role: operator.role };
  }
}
