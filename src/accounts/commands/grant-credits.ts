import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { Mode } from '../../platform/mode';
import { AccountStreams } from '../account-streams';

export interface CreditBalance {
  account: string;
  mode: Mode;
  credits: number;
}

export class GrantCreditsCommand extends Command<CreditBalance> {
  constructor(readonly account: string, readonly mode: Mode, readonly amount: number) {
    super();
  }
}

/** Generation credits per account and mode; the stream credits-<mode>-<account> is the balance. */
@CommandHandler(GrantCreditsCommand)
export class GrantCreditsHandler implements ICommandHandler<GrantCreditsCommand> {
  constructor(private readonly accounts: AccountStreams) {}

  async execute(command: GrantCreditsCommand): Promise<CreditBalance> {
    const account = await this.accounts.get(command.account);
    const { state } = await this.accounts.onCredits(command.mode, account.id, {
      type: 'GrantCredits',
      account_id: account.id,
      mode: command.mode,
      amount: command.amount,
      now: new Date().toISOString(),
    });
    return { account: account.id, mode: command.mode, credits: state.credits };
  }
}
