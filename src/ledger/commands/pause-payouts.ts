import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import type { Mode } from '../../platform/mode';
import { LedgerStreams } from '../ledger-streams';

export interface PayoutsPausedView {
  account: string;
  mode: Mode;
  payouts_paused: boolean;
}

export class PausePayoutsCommand extends Command<PayoutsPausedView> {
  constructor(readonly account: string, readonly mode: Mode) {
    super();
  }
}

export class ResumePayoutsCommand extends Command<PayoutsPausedView> {
  constructor(readonly account: string, readonly mode: Mode) {
    super();
  }
}

/** Pausing a paused ledger (or resuming a running one) records nothing and answers the same. */
async function setPaused(ledgers: LedgerStreams, accounts: AccountStreams, command: PausePayoutsCommand, paused: boolean) {
  const account = await accounts.get(command.account);
  const payoutsPaused = await ledgers.handle(
    { type: paused ? 'PausePayouts' : 'ResumePayouts', account_id: account.id, mode: command.mode, now: new Date().toISOString() },
    (state) => state.paused,
  );
  return { account: account.id, mode: command.mode, payouts_paused: payoutsPaused };
}

@CommandHandler(PausePayoutsCommand)
export class PausePayoutsHandler implements ICommandHandler<PausePayoutsCommand> {
  constructor(private readonly ledgers: LedgerStreams, private readonly accounts: AccountStreams) {}

  execute(command: PausePayoutsCommand): Promise<PayoutsPausedView> {
    return setPaused(this.ledgers, this.accounts, command, true);
  }
}

@CommandHandler(ResumePayoutsCommand)
export class ResumePayoutsHandler implements ICommandHandler<ResumePayoutsCommand> {
  constructor(private readonly ledgers: LedgerStreams, private readonly accounts: AccountStreams) {}

  execute(command: ResumePayoutsCommand): Promise<PayoutsPausedView> {
    return setPaused(this.ledgers, this.accounts, command, false);
  }
}
