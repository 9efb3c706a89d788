import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { NewEvent } from '../../event-store/event-store';
import type { AuthContext } from '../../platform/auth/auth-context';
import { BLOB_STORE, BlobStore } from '../../storage/blob-store';
import { ApiError } from '../../platform/errors';
import { CatalogEvents, ListingKind, ListingPublished, ListingValidationFailed, PublishedFile } from '../events';
import { evolve, ListingState, toPublicObject } from '../listing';
import { ListingStore } from '../listing-store';
import { preparePublication } from '../publish-validation';

/** ListingPublished carries the public object as it reads once published (the webhook payload) and the files buyers get. */
export function publishedEvent(listing: ListingState, at: string, files: PublishedFile[]): NewEvent {
  const data: ListingPublished = { listing_id: listing.id, account_id: listing.account_id, mode: listing.mode, listing: {}, files, published_at: at };
  data.listing = toPublicObject(evolve(listing, { type: CatalogEvents.ListingPublished, data })!);
  return { type: CatalogEvents.ListingPublished, data: { ...data } };
}

/** Idempotent: publishing a published listing changes nothing and answers the same. */
export class PublishListingCommand extends Command<ListingState> {
  constructor(readonly auth: AuthContext, readonly idOrSlug: string, readonly kind?: ListingKind) {
    super();
  }
}

@CommandHandler(PublishListingCommand)
export class PublishListingHandler implements ICommandHandler<PublishListingCommand> {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly listings: ListingStore,
  ) {}

  async execute({ auth, idOrSlug, kind }: PublishListingCommand): Promise<ListingState> {
    return this.listings.retryOnConflict(async () => {
      const { state, revision } = await this.listings.loadOwn(auth.mode, auth.accountId, idOrSlug, kind);
      if (state.status === 'published') return state;
      let files: PublishedFile[];
      try {
        files = await preparePublication(state, this.blobs);
      } catch (error) {
        // Refused by its checks: the listing shows why (validation_status failed) until a publish passes.
        if (error instanceof ApiError && error.status < 500) await this.recordFailure(state, revision, error);
        throw error;
      }
      return this.listings.append(state, auth.mode, state.id, [publishedEvent(state, new Date().toISOString(), files)], revision);
    });
  }

  private async recordFailure(state: ListingState, revision: number, error: ApiError): Promise<void> {
    const problems = [{ code: error.code, message: error.message }];
    // The same failure again records nothing.
    if (state.validation_status === 'failed' && JSON.stringify(state.validation_errors) === JSON.stringify(problems)) return;
    const failed: ListingValidationFailed = { listing_id: state.id, account_id: state.account_id, mode: state.mode, errors: problems, failed_at: new Date().toISOString() };
    await this.listings.append(state, state.mode, state.id, [{ type: CatalogEvents.ListingValidationFailed, data: { ...failed } }], revision);
  }
}
