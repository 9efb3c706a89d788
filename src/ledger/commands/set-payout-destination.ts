import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import type { Mode } from '../../platform/mode';
import { LedgerStreams } from '../ledger-streams';

export interface PayoutDestinationView {
  account: string;
  mode: Mode;
  stripe_account: string;
}

/** `svc payouts destination`: the Stripe connected account that receives this ledger's payouts. */
export class SetPayoutDestinationCommand extends Command<PayoutDestinationView> {
  constructor(readonly account: string, readonly mode: Mode, readonly stripeAccount: string) {
    super();
  }
}

@CommandHandler(SetPayoutDestinationCommand)
export class SetPayoutDestinationHandler implements ICommandHandler<SetPayoutDestinationCommand> {
  constructor(private readonly ledgers: LedgerStreams, private readonly accounts: AccountStreams) {}

  async execute({ account, mode, stripeAccount }: SetPayoutDestinationCommand): Promise<PayoutDestinationView> {
    const found = await this.accounts.get(account);
    const destination = await this.ledgers.handle(
      { type: 'SetPayoutDestination', account_id: found.id, mode, now: new Date().toISOString(), stripe_account: stripeAccount },
      (state) => state.destination!,
    );
    return { account: found.id, mode, stripe_account: destination };
  }
}
