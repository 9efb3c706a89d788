import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import type { Mode } from '../../platform/mode';
import { Credits } from '../credits';

export interface CreditBalance {
  account: string;
  mode: Mode;
  credits: number;
}

/** An operator's grant of generation credits to an account (by id or slug) in one mode. */
export class GrantCreditsCommand extends Command<CreditBalance> {
  constructor(readonly account: string, readonly mode: Mode, readonly amount: number) {
    super();
  }
}

@CommandHandler(GrantCreditsCommand)
export class GrantCreditsHandler implements ICommandHandler<GrantCreditsCommand> {
  constructor(
    private readonly accounts: AccountStreams,
    private readonly credits: Credits,
  ) {}

  async execute(command: GrantCreditsCommand): Promise<CreditBalance> {
    const account = await this.accounts.get(command.account);
    return { account: account.id, mode: command.mode, credits: await this.credits.grant(command.mode, account.id, command.amount) };
  }
}
