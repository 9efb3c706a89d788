import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../event-store/event-store';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountStreams } from '../account-streams';
import { AccountEvents, CreditsGranted } from '../events';

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
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly accounts: AccountStreams,
    private readonly writer: EventWriter,
  ) {}

  async execute(command: GrantCreditsCommand): Promise<CreditBalance> {
    const account = await this.accounts.get(command.account);
    const stream = Streams.credits(command.mode, account.id);
    return this.writer.retryOnConflict(async () => {
      const events = await this.store.readStream(stream);
      const last = events[events.length - 1];
      const credits = (last ? (last.data as CreditsGranted).credits : 0) + command.amount;
      const granted: CreditsGranted = {
        account_id: account.id,
        mode: command.mode,
        amount: command.amount,
        credits,
        granted_at: new Date().toISOString(),
      };
      await this.writer.append(stream, [{ type: AccountEvents.CreditsGranted, data: { ...granted } }], last ? last.revision : 'no_stream');
      return { account: account.id, mode: command.mode, credits };
    });
  }
}
