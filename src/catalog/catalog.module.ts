import { BeforeApplicationShutdown, Inject, Module, OnApplicationBootstrap } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { AccountsModule } from '../accounts/accounts.module';
import { CatalogQueries } from './catalog-queries';
import { DownloadAssetHandler, Downloads } from './commands/download-asset';
import { DraftListingHandler } from './commands/draft-listing';
import { PublishListingHandler } from './commands/publish-listing';
import { UnpublishListingHandler } from './commands/unpublish-listing';
import { UpdateListingHandler } from './commands/update-listing';
import { DatasetsController } from './datasets.controller';
import { DatasetPreviews } from './dataset-previews';
import { Entitlements } from './entitlement';
import { InspectionWorker } from './inspection-worker';
import { ListingStore } from './listing-store';
import { ListingsController } from './listings.controller';
import { ModelsController } from './models.controller';
import { ShardChecksums } from './shard-checksums';
import { ShardsController } from './shards.controller';
import { UploadGrants } from './upload-grants';
import { UploadsController } from './uploads.controller';

@Module({
  imports: [AccountsModule],
  controllers: [UploadsController, ModelsController, ListingsController, DatasetsController, ShardsController],
  providers: [
    CatalogQueries,
    ListingStore,
    // Its PURCHASE_LOOKUP (who bought what) is commerce's, bound in the composition root (app.module.ts).
    Entitlements,
    DraftListingHandler,
    PublishListingHandler,
    UnpublishListingHandler,
    UpdateListingHandler,
    DownloadAssetHandler,
    Downloads,
    UploadGrants,
    ShardChecksums,
    DatasetPreviews,
    InspectionWorker,
  ],
  exports: [CatalogQueries, Entitlements, ListingStore, DatasetPreviews],
})
export class CatalogModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly inspections: InspectionWorker,
  ) {}

  /** The background inspection of large published files runs with the workers (settings.workers). */
  async onApplicationBootstrap(): Promise<void> {
    if (this.settings.workers) await this.inspections.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.inspections.stop();
  }
}
