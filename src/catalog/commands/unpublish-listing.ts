import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import type { ListingKind } from '../events';
import type { ListingState } from '../listing.decider';
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

  execute({ auth, idOrSlug, kind }: UnpublishListingCommand): Promise<ListingState> {
    return this.listings.handleOwn(auth.mode, auth.accountId, idOrSlug, kind, () => ({ type: 'Unpublish', account_id: auth.accountId, now: new Date().toISOString() }));
  }
}
