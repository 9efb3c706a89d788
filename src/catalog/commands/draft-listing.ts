import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AccountStreams } from '../../accounts/account-streams';
import { SETTINGS, Settings } from '../../config/settings';
import { EVENT_STORE, EventStore, WrongExpectedRevisionError } from '../../event-store/event-store';
import type { AuthContext } from '../../platform/auth/auth-context';
import { newId } from '../../platform/ids';
import { ApiError } from '../../platform/errors';
import { claimFreeSlug, slugify } from '../../platform/slug';
import { Streams } from '../../platform/streams';
import { BLOB_STORE, BlobStore } from '../../storage/blob-store';
import { CatalogEvents, ListingDetails, ListingDrafted, ListingKind, ListingSlugClaimed } from '../events';
import { assertValidPrice } from '../listing';
import { evolve, ListingState } from '../listing.decider';
import { ListingStore } from '../listing-store';
import { assertFileReference, preparePublication } from '../publish-validation';
import { assertWithinMaxBytes } from '../upload-policy';

/**
 * A new listing as a draft, or (POST /v1/models) drafted and published in one append.
 * `listingId` is for a caller that must make at most one listing of something of its own
 * (a generation job): the listing's first append is no_stream, so a second attempt with the
 * same id fails as a conflict instead of creating a second listing.
 */
export class DraftListingCommand extends Command<ListingState> {
  constructor(
    readonly auth: AuthContext,
    readonly kind: ListingKind,
    readonly details: ListingDetails,
    readonly publish: boolean,
    readonly listingId?: string,
  ) {
    super();
  }
}

@CommandHandler(DraftListingCommand)
export class DraftListingHandler implements ICommandHandler<DraftListingCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly accounts: AccountStreams,
    private readonly listings: ListingStore,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async execute({ auth, kind, details, publish, listingId: chosenId }: DraftListingCommand): Promise<ListingState> {
    assertValidPrice(details.price.amount);
    // A draft may precede its upload, but never point outside the seller's prefix, nor name a file no upload could be.
    if (details.file) {
      assertFileReference(auth.accountId, details.file);
      assertWithinMaxBytes(details.file.size, this.settings.uploads.maxBytes, 'file_size');
    }
    const account = await this.accounts.getById(auth.accountId);
    const listingId = chosenId ?? newId('lst');
    const drafted: ListingDrafted = {
      listing_id: listingId,
      account_id: auth.accountId,
      mode: auth.mode,
      kind,
      slug: '',
      author: { slug: account.slug, name: account.name },
      details,
      created_at: new Date().toISOString(),
    };
    // Validate before claiming a slug, so rejected input leaves no trace at all.
    const prepared = publish ? await preparePublication(evolve(undefined, { type: 'ListingDrafted', data: drafted })!, this.blobs, this.settings.inspection) : null;
    drafted.slug = await this.claimSlug(auth, details.title || kind, listingId);
    // The listing's first append is at no_stream (its stream is new): a draft of an id already taken is a 409 conflict.
    return (await this.listings.handle(auth.mode, listingId, { type: 'Draft', drafted, publish: prepared?.files ?? null, background: prepared?.background })).state!;
  }

  /** Slugs derive from the title and are unique per mode: "grasp-net", "grasp-net-2", then a random suffix (claimFreeSlug). */
  private async claimSlug(auth: AuthContext, title: string, listingId: string): Promise<string> {
    const base = slugify(title) || 'listing';
    const slug = await claimFreeSlug(base, (candidate) => this.tryClaim(auth, candidate, listingId));
    if (!slug) throw new ApiError(409, 'conflict', `No free slug near "${base}" this time; try again.`);
    return slug;
  }

  /**
   * A slug claim is a plain no_stream append, not a decider's: the claim stream holds one
   * event, and whether it could be appended is the whole decision.
   */
  private async tryClaim(auth: AuthContext, slug: string, listingId: string): Promise<boolean> {
    const claim: ListingSlugClaimed = { slug, listing_id: listingId, mode: auth.mode };
    try {
      await this.events.append(Streams.listingSlug(auth.mode, slug), [{ type: CatalogEvents.ListingSlugClaimed, data: { ...claim } }], 'no_stream');
      return true;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) return false;
      throw error;
    }
  }
}
