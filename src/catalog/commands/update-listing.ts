import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import type { ListingDetails, ListingKind } from '../events';
import { assertValidPrice } from '../listing';
import type { ListingState } from '../listing.decider';
import { ListingStore } from '../listing-store';

/** PATCH: price, version and metadata of one's own listing, in any state. The file is fixed once drafted. */
export class UpdateListingCommand extends Command<ListingState> {
  constructor(
    readonly auth: AuthContext,
    readonly idOrSlug: string,
    readonly changes: Partial<Omit<ListingDetails, 'file'>>,
    readonly kind?: ListingKind,
  ) {
    super();
  }
}

@CommandHandler(UpdateListingCommand)
export class UpdateListingHandler implements ICommandHandler<UpdateListingCommand> {
  constructor(
    private readonly listings: ListingStore,
  ) {}

  async execute({ auth, idOrSlug, changes, kind }: UpdateListingCommand): Promise<ListingState> {
    // Checked before the listing is looked up, as the body's other fields are.
    if (changes.price) assertValidPrice(changes.price.amount);
    return this.listings.handleOwn(auth.mode, auth.accountId, idOrSlug, kind, () => ({ type: 'Update', account_id: auth.accountId, changes, now: new Date().toISOString() }));
  }
}
