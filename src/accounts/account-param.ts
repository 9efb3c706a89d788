import { Errors } from '../platform/errors';
import type { AccountQueries } from './account-queries';

/** The `account` parameter (an id or a slug) of an operator endpoint, as an account id; 404 when there is none. */
export async function accountIdParam(accounts: AccountQueries, ref: unknown): Promise<string> {
  if (ref === undefined) throw Errors.validationFailed('Invalid field "account": required.');
  if (typeof ref !== 'string') throw Errors.validationFailed('Invalid field "account": give one account id or slug.');
  const found = await accounts.findAccount(ref);
  if (!found) throw Errors.notFound('account');
  return found.id;
}
