import { Controller, Get } from '@nestjs/common';
import { Auth, AuthContext } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { AccountQueries } from './account-queries';
import { KeptAccounts } from './kept-accounts';

@Controller('v1')
export class MeController {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly kept: KeptAccounts,
  ) {}

  /**
   * GET /v1/me: the account behind the key, the key's mode and scopes, and the generation
   * credits left in that mode (issue 12: what is left, beside each job's credits_spent). Any valid key.
   * The key is named by its public id, never its secret; its tier and expiry say what it may do
   * and until when, and an empty scope list means unrestricted (issue 44).
   */
  @Get('me')
  async me(@Auth() auth: AuthContext) {
    const account = await this.kept.account(auth.accountId);
    if (!account) throw Errors.notFound('account');
    return { ...account, key: { id: auth.keyId, mode: auth.mode, tier: auth.tier, scopes: auth.scopes, expires_at: auth.expiresAt ?? null }, credits: await this.accounts.creditsLeft(auth) };
  }
}
