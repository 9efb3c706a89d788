import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore, WrongExpectedRevisionError } from '../../event-store/event-store';
import { ApiError } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { claimFreeSlug, slugify } from '../../platform/slug';
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
   * A chosen slug is taken once (409 when it is not free); a derived one is the first free of
   * the name, "-2", then a random suffix (claimFreeSlug). A claim is a plain append at
   * no_stream, not a decider's: the store's expected revision is the whole rule.
   */
  private async claimSlug(command: CreateAccountCommand, accountId: string): Promise<string> {
    const claim = async (slug: string) => {
      try {
        await this.store.append(Streams.accountSlug(slug), [{ type: AccountEvents.AccountSlugClaimed, data: { slug, account_id: accountId } satisfies AccountSlugClaimed }], 'no_stream');
        return true;
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) return false;
        throw error;
      }
    };
    if (command.slug) {
      if (await claim(command.slug)) return command.slug;
      throw new ApiError(409, 'conflict', `The account slug "${command.slug}" is already taken.`);
    }
    const base = slugify(command.name) || 'account';
    const slug = await claimFreeSlug(base, claim);
    if (!slug) throw new ApiError(409, 'conflict', `No free slug near "${base}" this time; try again, or pass --slug.`);
    return slug;
  }
}
