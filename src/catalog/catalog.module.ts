import { Module } from '@nestjs/common';
import { AccountsModule } from '../accounts/accounts.module';
import { CatalogQueries } from './catalog-queries';
import { DownloadAssetHandler, Downloads } from './commands/download-asset';
import { DraftListingHandler } from './commands/draft-listing';
import { PublishListingHandler } from './commands/publish-listing';
import { UnpublishListingHandler } from './commands/unpublish-listing';
import { UpdateListingHandler } from './commands/update-listing';
import { DatasetsController } from './datasets.controller';
import { Entitlements } from './entitlement';
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
  ],
  exports: [CatalogQueries, Entitlements, ListingStore],
})
export class CatalogModule {}
