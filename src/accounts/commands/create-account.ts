import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore, WrongExpectedRevisionError } from '../../event-store/event-store';
import { ApiError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { slugify } from '../../platform/slug';
import { Streams } from '../../platform/streams';
import type { AccountView } from '../account-queries';
import { AccountStreams, toAccountView } from '../account-streams';
import { AccountEvents, AccountSlugClaimed } from '../events';

export class CreateAccountCommand extends Command<AccountView> {
  constructor(readonly name: string, readonly email: string, readonly slug?: string) {
    super();
  }
}

@CommandHandler(CreateAccountCommand)
export class CreateAccountHandler implements ICommandHandler<CreateAccountCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly accounts: AccountStreams,
  ) {}

  async execute(command: CreateAccountCommand): Promise<AccountView> {
    const accountId = newId('acct');
    const slug = await this.claimSlug(command, accountId);
    const { state } = await this.accounts.onAccount(accountId, {
      type: 'CreateAccount',
      account_id: accountId,
      slug,
      name: command.name,
      email: command.email,
      now: new Date().toISOString(),
    });
    return toAccountView(state.created!);
  }

  /**
   * A chosen slug is taken once (409 when it is not free); a derived one gets -2, -3, ...
   * A claim is a plain append at no_stream, not a decider's: the store's expected revision
   * is the whole rule, and a taken slug must move on to the next one without reading it.
   */
  private async claimSlug(command: CreateAccountCommand, accountId: string): Promise<string> {
    const base = command.slug ?? (slugify(command.name) || 'account');
    for (let n = 1; n <= 20; n++) {
      const slug = n === 1 ? base : `${base}-${n}`;
      const claim: AccountSlugClaimed = { slug, account_id: accountId };
      try {
        await this.store.append(Streams.accountSlug(slug), [{ type: AccountEvents.AccountSlugClaimed, data: { ...claim } }], 'no_stream');
        return slug;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (command.slug) throw new ApiError(409, 'conflict', `The account slug "${slug}" is already taken.`);
      }
    }
    throw new ApiError(409, 'conflict', `No free slug near "${base}"; pass --slug.`);
  }
}
