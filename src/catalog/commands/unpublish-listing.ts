import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { CatalogEvents, ListingKind, ListingUnpublished } from '../events';
import { evolve, ListingState, toPublicObject } from '../listing';
import { ListingStore } from '../listing-store';

/** Idempotent; a draft that was never published stays a draft. Purchase history is untouched. */
export class UnpublishListingCommand extends Command<ListingState> {
  constructor(readonly auth: AuthContext, readonly idOrSlug: string, readonly kind?: ListingKind) {
    super();
  }
}

@CommandHandler(UnpublishListingCommand)
export class UnpublishListingHandler implements ICommandHandler<UnpublishListingCommand> {
  constructor(
    private readonly listings: ListingStore,
  ) {}

  async execute({ auth, idOrSlug, kind }: UnpublishListingCommand): Promise<ListingState> {
    return this.listings.retryOnConflict(async () => {
      const { state, revision } = await this.listings.loadOwn(auth.mode, auth.accountId, idOrSlug, kind);
      if (state.status !== 'published') return state;
      const data: ListingUnpublished = {
        listing_id: state.id,
        account_id: state.account_id,
        mode: state.mode,
        listing: {},
        unpublished_at: new Date().toISOString(),
      };
      data.listing = toPublicObject(evolve(state, { type: CatalogEvents.ListingUnpublished, data })!);
      return this.listings.append(state, auth.mode, state.id, [{ type: CatalogEvents.ListingUnpublished, data: { ...data } }], revision);
    });
  }
}
