import { Inject, Injectable } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { AuthContext } from '../../platform/auth/auth-context';
import { Errors } from '../../platform/errors';
import { BLOB_STORE, BlobStore, DOWNLOAD_URL_TTL_SECONDS } from '../../storage/blob-store';
import { blobsOfMode } from '../../storage/mode-staging';
import { Entitlements } from '../entitlement';
import { WrongExpectedRevisionError } from '../../event-store/event-store';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { CatalogEvents, DatasetDownloadCounted } from '../events';
import { listingDecider, ListingState } from '../listing.decider';
import { ListingStore } from '../listing-store';
import { assertServable, servedModelFile } from '../published-files';

export interface DownloadGrant {
  url: string;
  expires_in: number;
  file_name: string;
  file_size: number;
  /** Recorded at publish, so the buyer can check the bytes; null for listings published before it was. */
  file_sha256: string | null;
}

/**
 * Records downloads (AssetDownloaded on the listing's stream), which count them and fire
 * asset.downloaded. The seller fetching their own files is not a download.
 */
@Injectable()
export class Downloads {
  constructor(private readonly writer: EventWriter) {}

  /** A model's: every granted download counts. */
  async record(auth: AuthContext, listing: ListingState, now = new Date()): Promise<void> {
    const downloaded = listingDecider.decide({ type: 'RecordDownload', buyer_account_id: auth.accountId, now: now.toISOString() }, listing);
    if (!downloaded.length) return;
    // Decided on the listing as the grant found it, and appended with 'any', not through
    // StreamCommands at the loaded revision: a download is a fact about a grant already
    // decided, and concurrent downloads of a popular listing must not fail (or retry) each other.
    await this.writer.append(Streams.listing(auth.mode, listing.id), downloaded.map((e) => ({ type: e.type, data: { ...e.data } })), 'any');
  }

  /**
   * A dataset's: fetched shard by shard, it counts once per buyer and UTC day, at the first
   * shard fetched. The day is claimed first (no_stream), so concurrent fetches count once; a
   * crash between the claim and the count loses that day's count, never doubles it.
   */
  async recordDatasetFetch(auth: AuthContext, dataset: ListingState, now = new Date()): Promise<void> {
    if (dataset.account_id === auth.accountId) return;
    const day = now.toISOString().slice(0, 10);
    // The day's claim stream is a plain no_stream append: taken once, there is nothing to decide on it.
    const counted: DatasetDownloadCounted = { listing_id: dataset.id, buyer_account_id: auth.accountId, mode: dataset.mode, day, counted_at: now.toISOString() };
    try {
      await this.writer.append(
        Streams.datasetDownloadDay(dataset.mode, dataset.id, auth.accountId, day),
        [{ type: CatalogEvents.DatasetDownloadCounted, data: { ...counted } }],
        'no_stream',
      );
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) return;
      throw error;
    }
    await this.record(auth, dataset, now);
  }
}

/**
 * POST /v1/models/{id_or_slug}/download: a 120 s signed URL for an entitled caller, of the
 * copy frozen at publish, after checking it is still the size recorded. A
 * download by someone other than the seller is recorded (AssetDownloaded), which counts
 * it and fires asset.downloaded; the seller fetching their own file is not a download.
 */
export class DownloadAssetCommand extends Command<DownloadGrant> {
  constructor(readonly auth: AuthContext, readonly idOrSlug: string) {
    super();
  }
}

@CommandHandler(DownloadAssetCommand)
export class DownloadAssetHandler implements ICommandHandler<DownloadAssetCommand> {
  constructor(
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly entitlements: Entitlements,
    private readonly downloads: Downloads,
    private readonly listings: ListingStore,
  ) {}

  async execute({ auth, idOrSlug }: DownloadAssetCommand): Promise<DownloadGrant> {
    const loaded = await this.listings.find(auth.mode, idOrSlug);
    if (!loaded || !(await this.entitlements.isReachable(auth, loaded.state))) throw Errors.notFound('model');
    const listing = loaded.state;
    if (listing.kind === 'dataset') {
      throw Errors.invalidRequest('A dataset is downloaded shard by shard: GET /v1/datasets/{id}/shards/{name}.');
    }
    // Only the owner can see a listing without a file: their own draft that never got one.
    const file = servedModelFile(listing);
    if (!file) throw Errors.invalidRequest('This draft has no file yet; give it storage_path, file_name and file_size.');
    await this.entitlements.assertEntitled(auth, listing);
    const blobs = blobsOfMode(this.blobs, listing.mode);
    await assertServable(blobs, listing, file);
    await this.downloads.record(auth, listing);
    return {
      url: await blobs.signDownload(file.path, { expiresIn: DOWNLOAD_URL_TTL_SECONDS, fileName: file.name }),
      expires_in: DOWNLOAD_URL_TTL_SECONDS,
      file_name: file.name,
      file_size: file.size,
      file_sha256: file.sha256,
    };
  }
}
