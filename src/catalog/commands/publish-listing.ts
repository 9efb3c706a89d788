import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { BLOB_STORE, BlobStore } from '../../storage/blob-store';
import { ApiError } from '../../platform/errors';
import type { ListingKind, PublishedFile } from '../events';
import type { DatasetSample } from '../dataset-preview';
import type { ListingCommand, ListingState } from '../listing.decider';
import { ListingStore } from '../listing-store';
import { preparePublication } from '../publish-validation';
import { problemsOf } from '../published-files';
import { SETTINGS, Settings } from '../../config/settings';

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
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async execute({ auth, idOrSlug, kind }: PublishListingCommand): Promise<ListingState> {
    let refused: ApiError | undefined;
    const state = await this.listings.handleOwn(auth.mode, auth.accountId, idOrSlug, kind, async (state): Promise<ListingCommand> => {
      refused = undefined;
      const publish = (files: PublishedFile[], background = false, sample?: DatasetSample): ListingCommand => ({ type: 'Publish', account_id: auth.accountId, files, background, ...(sample && { sample }), now: new Date().toISOString() });
      // Published already (the decider records nothing), or not the caller's (it refuses): no checks to run.
      // Its files still being inspected in the background: the answer is the listing, pending.
      if (state?.account_id !== auth.accountId || state.status === 'published' || state.pending_inspection) return publish([]);
      try {
        // The checks and the freezing of the files read storage: done here, made afresh on a retry.
        const prepared = await preparePublication(state, this.blobs, this.settings.inspection);
        return publish(prepared.files, prepared.background, prepared.sample);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        // Refused by its checks: the listing shows why (validation_status failed) until a publish passes.
        refused = error;
        return { type: 'RecordPublishFailure', account_id: auth.accountId, problems: problemsOf(error), now: new Date().toISOString() };
      }
    });
    if (refused) throw refused;
    return state;
  }
}
