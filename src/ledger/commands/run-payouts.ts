import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountQueries } from '../../accounts/account-queries';
import { Errors } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Mode } from '../../platform/mode';
import type { Payout } from '../events';
import { LedgerErrors } from '../ledger.errors';
import { LedgerQueries } from '../ledger-queries';
import { LedgerStreams } from '../ledger-streams';

/**
 * Pays each account's whole positive balance (one account, or every account of the mode).
 * In a run over the mode, a paused account or one without a positive balance is skipped;
 * asked for one such account, it answers why (400 payouts_paused or nothing_to_pay).
 */
export class RunPayoutsCommand extends Command<{ items: Payout[] }> {
  constructor(readonly mode: Mode, readonly account?: string) {
    super();
  }
}

@CommandHandler(RunPayoutsCommand)
export class RunPayoutsHandler implements ICommandHandler<RunPayoutsCommand> {
  constructor(
    private readonly ledgers: LedgerStreams,
    private readonly accounts: AccountQueries,
    private readonly queries: LedgerQueries,
  ) {}

  async execute({ mode, account }: RunPayoutsCommand): Promise<{ items: Payout[] }> {
    let accountIds: string[];
    if (account !== undefined) {
      const found = await this.accounts.findAccount(account);
      if (!found) throw Errors.notFound('account');
      accountIds = [found.id];
    } else {
      // Only a shortlist: each account's stream decides the amount, not the read model.
      accountIds = await this.queries.payableAccounts(mode);
    }
    const items: Payout[] = [];
    for (const accountId of accountIds) {
      // Sandbox payouts settle at once. With a real processor the transfer goes through
      // the payment port here, and PayoutPaid is recorded when the processor confirms it.
      const { state, recorded } = await this.ledgers.handle({
        type: 'RunPayout',
        account_id: accountId,
        mode,
        now: new Date().toISOString(),
        transaction_id: newId('txn'),
        payout_id: newId('po'),
      });
      for (const event of recorded) if (event.type === 'PayoutPaid') items.push(event.data.payout);
      if (account !== undefined && !recorded.length) {
        throw state.paused ? LedgerErrors.payoutsPaused(accountId) : LedgerErrors.nothingToPay(accountId, state.summary.balance_cents);
      }
    }
    return { items };
  }
}
