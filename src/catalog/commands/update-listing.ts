import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { CatalogEvents, ListingDetails, ListingKind, ListingUpdated } from '../events';
import { assertValidPrice, ListingState } from '../listing';
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
    if (changes.price) assertValidPrice(changes.price.amount);
    return this.listings.retryOnConflict(async () => {
      const { state, revision } = await this.listings.loadOwn(auth.mode, auth.accountId, idOrSlug, kind);
      if (!Object.keys(changes).length) return state;
      const data: ListingUpdated = { listing_id: state.id, account_id: state.account_id, mode: state.mode, changes, updated_at: new Date().toISOString() };
      return this.listings.append(state, auth.mode, state.id, [{ type: CatalogEvents.ListingUpdated, data: { ...data } }], revision);
    });
  }
}
